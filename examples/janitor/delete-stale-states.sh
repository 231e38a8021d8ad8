#!/bin/sh
# Deletes the Terraform states of review environments that GitLab stopped or deleted, and reports
# stale locks. Run by the scheduled `delete_stale_states` job on the protected default branch.
#
# A state named "<prefix>-<rest>" belongs to the environment "<prefix>/<rest>" (the example
# pipeline's review-${CI_COMMIT_REF_SLUG} and review/${CI_COMMIT_REF_SLUG}). It is deleted when
# that environment is stopped or gone, the state was not written for STATE_MIN_AGE_HOURS, is not
# locked, and holds no managed resource: a state that still holds some is reported, never deleted,
# since deleting it would leave its namespace without an owner. States of other names are never
# touched. Exits 1 when a state needs a person: a lock older than STALE_LOCK_HOURS, or resources
# left in the state of a stopped environment.
#
# Needs curl and jq, and TF_STATE_JANITOR_TOKEN: a project access token with the Maintainer role
# (GitLab lets only Maintainers delete states) and the api scope, as a protected, masked variable.
set -eu

: "${TF_STATE_JANITOR_TOKEN:?set TF_STATE_JANITOR_TOKEN, a protected and masked project access token with the Maintainer role and the api scope}"
prefix="${STATE_ENVIRONMENT_PREFIX:-review}"
min_age=$((${STATE_MIN_AGE_HOURS:-24} * 3600))
lock_age=$((${STALE_LOCK_HOURS:-24} * 3600))
graphql="${CI_API_GRAPHQL_URL:-${CI_SERVER_URL}/api/graphql}"
states_url="${CI_API_V4_URL}/projects/${CI_PROJECT_ID}/terraform/state"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# api URL OUTPUT [curl options]: a request with the janitor's token, its answer in OUTPUT; any
# answer but 2xx ends the run, saying what the token needs.
api() {
  url="$1" out="$2"
  shift 2
  status="$(curl --silent --show-error --output "${out}" --write-out '%{http_code}' \
    --header "Authorization: Bearer ${TF_STATE_JANITOR_TOKEN}" "$@" "${url}")"
  case "${status}" in
    2??) ;;
    *)
      echo "${url%%\?*} answered HTTP ${status}: TF_STATE_JANITOR_TOKEN needs the api scope and the Maintainer role in this project." >&2
      exit 1
      ;;
  esac
}

# The environments that keep their states: available or stopping. A stopped or deleted one does not.
page=1
: >"${work}/live"
while [ -n "${page}" ]; do
  api "${CI_API_V4_URL}/projects/${CI_PROJECT_ID}/environments?per_page=100&page=${page}" "${work}/page" \
    --dump-header "${work}/headers"
  jq -r '.[] | select(.state != "stopped") | .name' "${work}/page" >>"${work}/live"
  page="$(tr -d '\r' <"${work}/headers" | awk -F': *' 'tolower($1) == "x-next-page" { print $2 }')"
done

# The project's states, from GraphQL (the REST API cannot list them): name, seconds since the
# last write, seconds since the lock was taken (-1 when unlocked) and who holds the lock.
after=null
: >"${work}/states"
while :; do
  jq -n --arg path "${CI_PROJECT_PATH}" --argjson after "${after}" '{
    query: "query($fullPath: ID!, $after: String) { project(fullPath: $fullPath) { terraformStates(first: 100, after: $after) { nodes { name updatedAt lockedAt lockedByUser { username } } pageInfo { hasNextPage endCursor } } } }",
    variables: {fullPath: $path, after: $after}}' >"${work}/query"
  api "${graphql}" "${work}/answer" --header "Content-Type: application/json" --data "@${work}/query"
  if ! jq -e '.data.project.terraformStates' "${work}/answer" >/dev/null; then
    echo "Listing the Terraform states of ${CI_PROJECT_PATH} failed: $(jq -c '.errors // "no such project"' "${work}/answer")." >&2
    echo "TF_STATE_JANITOR_TOKEN needs the api scope and a role in this project." >&2
    exit 1
  fi
  jq -r 'def secs: sub("\\.[0-9]+"; "") | fromdateiso8601;
    .data.project.terraformStates.nodes[]
    | [.name, (now - (.updatedAt | secs) | floor),
       (if .lockedAt then (now - (.lockedAt | secs) | floor) else -1 end),
       (.lockedByUser.username // "")] | @tsv' "${work}/answer" >>"${work}/states"
  [ "$(jq -r '.data.project.terraformStates.pageInfo.hasNextPage' "${work}/answer")" = true ] || break
  after="$(jq '.data.project.terraformStates.pageInfo.endCursor' "${work}/answer")"
done

needs_attention=0
deleted=0
tab="$(printf '\t')"
while IFS="${tab}" read -r name updated locked who; do
  if [ "${locked}" -ge "${lock_age}" ]; then
    echo "Stale lock: ${name} has been locked by ${who:-an unknown user} for $((locked / 3600)) hours. If no job runs on it, unlock it in Operate > Terraform states."
    needs_attention=1
  fi
  case "${name}" in "${prefix}"-?*) ;; *) continue ;; esac
  environment="${prefix}/${name#"${prefix}"-}"
  if grep -Fqx -- "${environment}" "${work}/live"; then
    continue
  fi
  if [ "${updated}" -lt "${min_age}" ]; then
    echo "Kept ${name}: written $((updated / 60)) minutes ago, less than STATE_MIN_AGE_HOURS."
    continue
  fi
  if [ "${locked}" -ge 0 ]; then
    echo "Kept ${name}: environment ${environment} is stopped or gone, but the state is locked."
    continue
  fi
  api "${states_url}/${name}" "${work}/state"
  resources="$(jq '[.resources[]? | select(.mode == "managed")] | length' "${work}/state")"
  if [ "${resources:-0}" -gt 0 ]; then
    echo "Kept ${name}: environment ${environment} is stopped or gone, but the state still holds ${resources} resources. Run its stop job again, or destroy them, then the next run deletes the state."
    needs_attention=1
    continue
  fi
  status="$(curl --silent --show-error --output /dev/null --write-out '%{http_code}' --request DELETE \
    --header "Authorization: Bearer ${TF_STATE_JANITOR_TOKEN}" "${states_url}/${name}")"
  case "${status}" in
    2?? | 404)
      echo "Deleted the Terraform state ${name}: environment ${environment} is stopped or gone."
      deleted=$((deleted + 1))
      ;;
    *)
      echo "Deleting the Terraform state ${name} answered HTTP ${status}: TF_STATE_JANITOR_TOKEN needs the Maintainer role and the api scope." >&2
      exit 1
      ;;
  esac
done <"${work}/states"

echo "Deleted ${deleted} Terraform states."
exit "${needs_attention}"
