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
//   - a workload whose controller cannot create pods because admission
//     refuses them (FailedCreate: a ResourceQuota no terminating pod will
//     free, a LimitRange, Pod Security, a webhook or policy that denied them);
//   - a PersistentVolumeClaim (of the release, or mounted by a pod that
//     waits for it) whose StorageClass does not exist, or that has none;
//   - a failed Job (BackoffLimitExceeded, DeadlineExceeded, ...), with how
//     its last failed pod ended;
//   - a Deployment whose progress deadline was exceeded;
//   - anything else kstatus reports as Failed.
//
// What might still clear by itself is not a failure but a blocker
// (Result.Blocked), named in the object's Progress: a pod the scheduler
// cannot place (a cluster autoscaler may add a node), a provisioner that
// keeps failing, a container failing its readiness probe, a LoadBalancer
// Service without an address, a FailedCreate that may pass. The caller
// decides how long to wait for them.
//
// Reasons and messages are Kubernetes' own, read from conditions and from
// the namespace's Events (Input.Events; Input.Since drops an earlier
// rollout's). Where kstatus calls an object Current too early, Evaluate
// waits longer, as helm --wait does: a Job until it completes, a
// LoadBalancer Service until it has an address.
//
// Only a workload's current pods count: the pods of a Deployment's newest
// ReplicaSet, of a StatefulSet's update revision, of a DaemonSet's current
// template generation. An upgrade that fixes a crash-looping Deployment is
// not failed by the old pods it is replacing.
//
// Objects are named by their manifest key (package manifest), relative to
// their own namespace: "Deployment.apps/web".
package readiness
