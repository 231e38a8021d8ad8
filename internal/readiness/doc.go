// Package readiness decides whether rolled-out objects are ready, and
// whether they have failed, from the objects and their pods alone.
//
// It is pure: callers read the objects and pods from the cluster (watching
// or polling with a context) and call [Evaluate] on each snapshot. Status is
// kstatus's (sigs.k8s.io/cli-utils/pkg/kstatus/status), which covers the
// built-in kinds and any custom resource that follows the conditions
// convention. On top of it, Evaluate looks at the pods of each workload, so
// that a rollout whose pods cannot start fails at once instead of at the
// timeout:
//
//   - a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job whose current
//     pods have a container waiting with CrashLoopBackOff, ImagePullBackOff,
//     ErrImagePull, CreateContainerConfigError or InvalidImageName;
//   - a bare Pod in the same state;
//   - a failed Job (BackoffLimitExceeded, DeadlineExceeded, ...);
//   - a Deployment whose progress deadline was exceeded;
//   - anything else kstatus reports as Failed.
//
// Only a workload's current pods count: the pods of a Deployment's newest
// ReplicaSet, of a StatefulSet's update revision, of a DaemonSet's current
// template generation. An upgrade that fixes a crash-looping Deployment is
// not failed by the old pods it is replacing.
//
// Objects are named by their manifest key (package manifest), relative to
// their own namespace: "Deployment.apps/web".
package readiness
