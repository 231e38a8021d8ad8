// Package chart loads Helm charts and renders them offline, the way Helm's
// install and upgrade would, into the objects a plan shows.
//
// It is pure in the sense the plan needs: no cluster, no Terraform
// framework. It reads local files and, for remote charts, fetches one index
// and one package (HTTP repositories) or one manifest and one layer (OCI
// registries), always through a [context.Context].
//
// # Sources
//
// [Load] accepts four kinds of [Source]:
//
//   - a chart directory ("./charts/web"); its digest is a hash of the chart's
//     files as Helm loads them (.helmignore applies);
//   - a packaged chart ("./web-1.2.3.tgz"); its digest is the hash of the
//     archive;
//   - a chart name in an HTTP(S) chart repository (Repository set to the
//     repository URL); the version, or version constraint, resolves to
//     exactly one version through the repository's index.yaml, and the
//     digest is the hash of the downloaded package, checked against the
//     digest the index lists;
//   - an OCI reference ("oci://registry.example/charts/web"); the version
//     (or the reference's tag) resolves to one tag, and the digest is the
//     hash of the chart layer, checked by content addressing.
//
// Digests have the form "sha256:<hex>". A chart republished under the same
// version changes its digest, so the plan shows it.
//
// # Rendering
//
// [Render] runs Helm's template engine with no cluster: the lookup function
// returns nothing, .Capabilities comes from [RenderOptions], and template
// errors keep Helm's "template: <chart>/templates/<file>:<line>:<col>"
// position. The result separates ordinary objects, hooks and CRDs, and keeps
// Helm's own manifest text so that what Helm applies can be compared with
// what the plan showed.
//
// [Manifests] turns a rendering into the per-object manifests of the plan,
// keyed as package manifest documents, with Secret values and every
// sensitive value redacted.
package chart
