#!/usr/bin/env bash
# Prints the path of a Terraform-compatible CLI for acceptance tests: `terraform` from PATH when
# there is one, otherwise an OpenTofu built from source (scripts/build-opentofu.sh).
# Callers export it as TF_ACC_TERRAFORM_PATH; when the basename is `tofu` they must also set
# TF_ACC_PROVIDER_NAMESPACE (scripts/test.sh uses gitlabk8s), because OpenTofu rejects
# terraform-plugin-testing's default provider namespace, the legacy "-".
set -euo pipefail

if command -v terraform >/dev/null 2>&1; then
  command -v terraform
  exit 0
fi
exec "$(dirname "$0")/build-opentofu.sh"
