package e2e

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// CIConfig is a parsed .gitlab-ci.yml: the parts a shell executor needs to
// run a job. Rules and workflow are not evaluated: a test names the jobs a
// pipeline runs.
type CIConfig struct {
	Stages []string
	// Variables are the global `variables`, unexpanded.
	Variables map[string]string
	// defaults are the `default` keys (and the deprecated top-level
	// before_script and after_script) a job gets when it lacks them.
	defaults map[string]any
	// entries are the jobs and hidden jobs, unresolved.
	entries map[string]map[string]any
}

// Job is one job with `extends` and `default` resolved.
type Job struct {
	Name         string
	Stage        string
	Variables    map[string]string
	BeforeScript []string
	Script       []string
	// Needs lists the jobs whose artifacts the job downloads; nil when the
	// job has no `needs`, in which case it gets every earlier stage's.
	Needs           []string
	Environment     Environment
	ResourceGroup   string
	ArtifactPaths   []string
	TerraformReport string
}

// Environment is a job's `environment`, unexpanded.
type Environment struct {
	Name, Action, OnStop, AutoStopIn string
	// Kubernetes is `environment:kubernetes`, the Kubernetes dashboard's
	// configuration.
	Kubernetes EnvironmentKubernetes
}

// EnvironmentKubernetes is `environment:kubernetes`, unexpanded.
type EnvironmentKubernetes struct {
	// Agent is `agent`: "<agent configuration project path>:<agent name>".
	Agent string
	// Namespace is `dashboard:namespace`, or the deprecated `namespace`.
	Namespace string
}

// globalKeywords are the top-level keys that are not jobs.
var globalKeywords = []string{"workflow", "stages", "variables", "default", "include", "image", "services", "cache", "before_script", "after_script"}

// maxExtendsDepth is GitLab's limit of inheritance levels.
const maxExtendsDepth = 11

// LoadCIConfig reads and parses a .gitlab-ci.yml file.
func LoadCIConfig(path string) (*CIConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CI configuration: %w", err)
	}
	cfg, err := ParseCIConfig(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return cfg, nil
}

// ParseCIConfig parses the YAML of a .gitlab-ci.yml.
func ParseCIConfig(data []byte) (*CIConfig, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	cfg := &CIConfig{defaults: map[string]any{}, entries: map[string]map[string]any{}}
	var err error
	if cfg.Stages, err = stringList(doc["stages"]); err != nil {
		return nil, fmt.Errorf("stages: %w", err)
	}
	if cfg.Variables, err = variables(doc["variables"]); err != nil {
		return nil, fmt.Errorf("variables: %w", err)
	}
	if def, ok := doc["default"].(map[string]any); ok {
		for k, v := range def {
			cfg.defaults[k] = v
		}
	}
	for _, k := range []string{"before_script", "after_script", "image"} {
		if v, ok := doc[k]; ok {
			cfg.defaults[k] = v
		}
	}
	for name, v := range doc {
		if slices.Contains(globalKeywords, name) {
			continue
		}
		entry, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("job %s: not a mapping", name)
		}
		cfg.entries[name] = entry
	}
	return cfg, nil
}

// Job resolves the named job. Hidden jobs (".name") are templates, not jobs.
func (c *CIConfig) Job(name string) (*Job, error) {
	if strings.HasPrefix(name, ".") {
		return nil, fmt.Errorf("%s is a hidden job, not a job", name)
	}
	raw, err := c.resolve(name, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range c.defaults {
		if _, ok := raw[k]; !ok {
			raw[k] = v
		}
	}
	job := &Job{Name: name, Stage: "test"}
	if s, ok := raw["stage"].(string); ok {
		job.Stage = s
	}
	if job.Variables, err = variables(raw["variables"]); err != nil {
		return nil, fmt.Errorf("job %s: variables: %w", name, err)
	}
	if job.BeforeScript, err = stringList(raw["before_script"]); err != nil {
		return nil, fmt.Errorf("job %s: before_script: %w", name, err)
	}
	if job.Script, err = stringList(raw["script"]); err != nil {
		return nil, fmt.Errorf("job %s: script: %w", name, err)
	}
	if len(job.Script) == 0 {
		return nil, fmt.Errorf("job %s has no script", name)
	}
	if needs, ok := raw["needs"]; ok {
		job.Needs = []string{}
		list, _ := needs.([]any)
		for _, n := range list {
			switch n := n.(type) {
			case string:
				job.Needs = append(job.Needs, n)
			case map[string]any:
				if artifacts, ok := n["artifacts"].(bool); ok && !artifacts {
					continue
				}
				if s, ok := n["job"].(string); ok {
					job.Needs = append(job.Needs, s)
				}
			}
		}
	}
	switch env := raw["environment"].(type) {
	case string:
		job.Environment.Name = env
	case map[string]any:
		job.Environment = Environment{Name: str(env["name"]), Action: str(env["action"]), OnStop: str(env["on_stop"]), AutoStopIn: str(env["auto_stop_in"])}
		job.Environment.Kubernetes = environmentKubernetes(env["kubernetes"])
	}
	job.ResourceGroup = str(raw["resource_group"])
	if artifacts, ok := raw["artifacts"].(map[string]any); ok {
		if job.ArtifactPaths, err = stringList(artifacts["paths"]); err != nil {
			return nil, fmt.Errorf("job %s: artifacts:paths: %w", name, err)
		}
		if reports, ok := artifacts["reports"].(map[string]any); ok {
			job.TerraformReport = str(reports["terraform"])
		}
	}
	return job, nil
}

func environmentKubernetes(v any) EnvironmentKubernetes {
	k, _ := v.(map[string]any)
	out := EnvironmentKubernetes{Agent: str(k["agent"]), Namespace: str(k["namespace"])}
	if dashboard, ok := k["dashboard"].(map[string]any); ok && str(dashboard["namespace"]) != "" {
		out.Namespace = str(dashboard["namespace"])
	}
	return out
}

// resolve returns the entry with its `extends` merged in: parents in order,
// each later one over the earlier, the entry's own keys over all of them.
func (c *CIConfig) resolve(name string, chain []string) (map[string]any, error) {
	if slices.Contains(chain, name) {
		return nil, fmt.Errorf("extends loop: %s", strings.Join(append(chain, name), " -> "))
	}
	if len(chain) >= maxExtendsDepth {
		return nil, fmt.Errorf("extends deeper than %d levels at %s", maxExtendsDepth, name)
	}
	entry, ok := c.entries[name]
	if !ok {
		if len(chain) == 0 {
			return nil, fmt.Errorf("no job %s", name)
		}
		return nil, fmt.Errorf("%s extends %s, which does not exist", chain[len(chain)-1], name)
	}
	parents, err := stringList(entry["extends"])
	if err != nil {
		return nil, fmt.Errorf("%s: extends: %w", name, err)
	}
	merged := map[string]any{}
	for _, parent := range parents {
		resolved, err := c.resolve(parent, append(chain, name))
		if err != nil {
			return nil, err
		}
		merged = deepMerge(merged, resolved)
	}
	own := map[string]any{}
	for k, v := range entry {
		if k != "extends" {
			own[k] = v
		}
	}
	return deepMerge(merged, own), nil
}

// deepMerge merges over into base as GitLab's extends does: mappings merge
// key by key, everything else (lists included) is replaced.
func deepMerge(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if vm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = deepMerge(bm, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// variables reads a `variables` mapping; a value may be a scalar or a
// mapping with `value` (and `description`).
func variables(v any) (map[string]string, error) {
	out := map[string]string{}
	if v == nil {
		return out, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a mapping")
	}
	for k, val := range m {
		if full, ok := val.(map[string]any); ok {
			val = full["value"]
		}
		s, err := scalar(val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}

// stringList reads a string or a list of strings; nested lists (as YAML
// anchors produce) are flattened.
func stringList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		var out []string
		for _, item := range v {
			items, err := stringList(item)
			if err != nil {
				return nil, err
			}
			out = append(out, items...)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("want a string or a list of strings, got %T", v)
	}
}

func scalar(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	default:
		return "", fmt.Errorf("want a scalar, got %T", v)
	}
}

func str(v any) string {
	s, _ := scalar(v)
	return s
}
