#!/usr/bin/env bash
# Prints the path of a Terraform-compatible CLI for acceptance tests: `terraform` from PATH when
# there is one, otherwise an OpenTofu built from source (scripts/build-opentofu.sh).
# Callers may export it as TF_ACC_TERRAFORM_PATH: the provider's acceptance tests run with either
# CLI.
set -euo pipefail

if command -v terraform >/dev/null 2>&1; then
  command -v terraform
  exit 0
fi
exec "$(dirname "$0")/build-opentofu.sh"
