package enginehost

import (
	"context"
	"os"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/front"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/provider"
)

var newProvider = provider.NewServer("test")

// The front answers GetProviderSchema from what it carries: a schema changed without
// scripts/generate.sh would reach Terraform stale. This fails until the answer is written again.
func TestSchemaAnswer_isTheOneTheFrontCarries(t *testing.T) {
	got, err := SchemaAnswer(context.Background(), provider.RegistryAddress, newProvider)
	if err != nil {
		t.Fatal(err)
	}
	same, err := SameSchema(front.SchemaAnswer(), got)
	if err != nil {
		t.Fatal(err)
	}
	if !same {
		t.Fatal("internal/front/schema.pb is not the provider's answer to GetProviderSchema: run scripts/generate.sh")
	}
	// And the comparison tells answers apart.
	if same, err := SameSchema(got[:0], got); err != nil || same {
		t.Fatalf("SameSchema took an empty answer for the provider's (%v, %v)", same, err)
	}
}

func TestMain(m *testing.M) {
	// The SDK's trace logs go to standard error unless asked for, as in the provider's main.
	if err := provider.SilenceUnaskedLogs(os.LookupEnv, os.Setenv); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
