// Package gitlabstate serves GitLab's Terraform state API (the backend that
// GitLab CI pipelines use through Terraform's and OpenTofu's `http` backend)
// for the end-to-end tests and the demo. It is a stand-in that follows the
// documented API, not a product feature: it keeps everything in memory.
//
// # Routes
//
// All under /api/v4/projects/:id/terraform/state/:name, where :id is the
// project's numeric ID or its URL-encoded path and :name is one segment:
//
//	GET    state         200 with the latest version; 204 when the state exists
//	                     without a version (only locked so far); 404 when absent
//	POST   state[?ID=x]  stores a new version; 204 for an empty body; 409 when
//	                     the state is locked and x is not the lock's ID (or the
//	                     state is unlocked and x is given)
//	DELETE state         removes the state; 403 unless the user is a
//	                     Maintainer, 404 when absent, 409 when locked
//	POST   state/lock    takes the lock with the body's lock info (ID required);
//	                     200 or 409, both answering the lock info held
//	DELETE state/lock    releases the lock; the ID comes from the JSON body or
//	                     ?ID=; without an ID the lock is released whoever holds
//	                     it (what `terraform force-unlock` and the Unlock button
//	                     of GitLab's Terraform states page do); a different ID
//	                     is a 409
//
// It also lists the project's environments (GET /api/v4/projects/:id/environments,
// with GitLab's offset pagination; environments.go), which tests fill with
// [Server.PutEnvironment], and serves the notes of merge requests and the
// token's user (notes.go), which a plan job posts its report with.
//
// And it answers the one GraphQL query GitLab offers to list a project's
// states, POST /api/graphql with a query on project(fullPath:) {
// terraformStates(first:, after:) } (graphql.go): each state's name,
// updatedAt, lockedAt and lockedByUser, with cursor pagination. It reads the
// query's variables fullPath, first and after, not its text; a query that does
// not ask for terraformStates is answered with an error. As in GitLab,
// GraphQL takes access tokens, not job tokens.
//
// Requests authenticate with HTTP basic auth: user `gitlab-ci-token` with a
// CI job token, or any user name with a personal access token; or with the
// REST API's token headers: PRIVATE-TOKEN or Authorization: Bearer with a
// personal access token, JOB-TOKEN with a job token. Anything else is a 401. Errors answer `{"message": "..."}` as GitLab does.
//
// One deviation from GitLab: deleting a locked state answers 409, where GitLab
// answers 200 and silently keeps the state, so a test notices.
package gitlabstate
