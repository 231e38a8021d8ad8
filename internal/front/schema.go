package front

import _ "embed"

// schemaAnswer is the provider's answer to GetProviderSchema, encoded as the engine sends it
// (deterministically), so that the process Terraform starts to read the schema needs no engine.
// scripts/generate.sh writes it (scripts/frontschema); a test of internal/enginehost checks it
// against the provider's answer.
//
//go:embed schema.pb
var schemaAnswer []byte

// SchemaAnswer returns the answer the front carries.
func SchemaAnswer() []byte { return append([]byte(nil), schemaAnswer...) }
