package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/petal-near/petal/app/config"
)

// No Docker engine nor Kubernetes runs where petal is built, so these tests
// check what can be checked without one: every file under deploy/ parses, and
// the facts the docs promise hold. .ci/run builds the binary with the
// Dockerfile's exact go build line.

const deployDir = "../../deploy"

type doc = map[string]any

// yamlDocs parses every document of a YAML file.
func yamlDocs(t *testing.T, path string) []doc {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []doc
	for {
		var d doc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "%s parses", path)
		if d != nil {
			docs = append(docs, d)
		}
	}
	return docs
}

// dig walks a parsed document by keys and list indexes.
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(doc)
			require.True(t, ok, "%v: expected a map at %q", path, k)
			v = m[k]
		case int:
			l, ok := v.([]any)
			require.True(t, ok && k < len(l), "%v: expected a list with item %d", path, k)
			v = l[k]
		}
	}
	return v
}

func k8sObjects(t *testing.T) map[string][]doc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(deployDir, "k8s", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	byKind := map[string][]doc{}
	for _, f := range files {
		for _, d := range yamlDocs(t, f) {
			kind, _ := d["kind"].(string)
			require.NotEmpty(t, kind, "%s: every object has a kind", f)
			require.NotEmpty(t, d["apiVersion"], "%s: every object has an apiVersion", f)
			byKind[kind] = append(byKind[kind], d)
		}
	}
	return byKind
}

func knownVariable(name string) bool {
	return slices.ContainsFunc(config.Variables, func(v config.Variable) bool { return v.Name == name })
}

func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	objs := k8sObjects(t)
	for _, kind := range []string{"Deployment", "Service", "Job", "Secret", "ConfigMap"} {
		require.Len(t, objs[kind], 1, "one %s", kind)
	}
	dep := objs["Deployment"][0]
	assert.Equal(t, 3, dig(t, dep, "spec", "replicas"))
	podLabels := dig(t, dep, "spec", "template", "metadata", "labels").(doc)
	assert.Equal(t, podLabels, dig(t, dep, "spec", "selector", "matchLabels"))
	c := dig(t, dep, "spec", "template", "spec", "containers", 0)
	assert.Equal(t, []any{"serve"}, dig(t, c, "args"))
	assert.Equal(t, "/api/v1/health", dig(t, c, "readinessProbe", "httpGet", "path"))
	assert.Equal(t, "/api/v1/info", dig(t, c, "livenessProbe", "httpGet", "path"), "liveness needs no database")
	assert.Equal(t, true, dig(t, dep, "spec", "template", "spec", "securityContext", "runAsNonRoot"))
	grace := dig(t, dep, "spec", "template", "spec", "terminationGracePeriodSeconds").(int)

	port := dig(t, c, "ports", 0)
	assert.Equal(t, "http", dig(t, port, "name"))
	svc := objs["Service"][0]
	assert.Equal(t, podLabels, dig(t, svc, "spec", "selector"), "the Service selects the Deployment's pods")
	assert.Equal(t, "http", dig(t, svc, "spec", "ports", 0, "targetPort"))

	job := objs["Job"][0]
	jc := dig(t, job, "spec", "template", "spec", "containers", 0)
	assert.Equal(t, []any{"migrate", "up"}, dig(t, jc, "args"))
	assert.Equal(t, dig(t, c, "image"), dig(t, jc, "image"), "the Job migrates with the served image")
	assert.Equal(t, "Never", dig(t, job, "spec", "template", "spec", "restartPolicy"))
	for _, container := range []any{c, jc} {
		assert.Equal(t, "petal", dig(t, container, "envFrom", 0, "configMapRef", "name"))
		assert.Equal(t, "petal", dig(t, container, "envFrom", 1, "secretRef", "name"))
	}

	cm := dig(t, objs["ConfigMap"][0], "data").(doc)
	sec := dig(t, objs["Secret"][0], "stringData").(doc)
	for _, m := range []doc{cm, sec} {
		for name := range m {
			assert.True(t, knownVariable(name), "%s is not a variable petal reads (app.Variables)", name)
		}
	}
	_, cfgErr := config.LoadConfig(func(k string) string { s, _ := cm[k].(string); return s })
	require.NoError(t, cfgErr, "the ConfigMap is a valid configuration")
	assert.Equal(t, "off", cm["PETAL_MIGRATE"], "replicas leave migrating to the Job")
	_, addrPort, err := net.SplitHostPort(cm["PETAL_ADDR"].(string))
	require.NoError(t, err)
	assert.Equal(t, addrPort, itoa(dig(t, port, "containerPort").(int)), "the container port is where petal listens")
	drain := cm["PETAL_SHUTDOWN_DRAIN_S"].(string)
	assert.Greater(t, grace, atoi(t, drain), "the grace period outlasts the drain")
	assert.Contains(t, sec, "DATABASE_URL")

	// The metrics listener: its own port, scraped by annotation, never
	// behind the Service.
	_, metricsPort, err := net.SplitHostPort(cm["PETAL_METRICS_ADDR"].(string))
	require.NoError(t, err, "the ConfigMap sets PETAL_METRICS_ADDR")
	assert.NotEqual(t, addrPort, metricsPort)
	assert.Equal(t, "metrics", dig(t, c, "ports", 1, "name"))
	assert.Equal(t, metricsPort, itoa(dig(t, c, "ports", 1, "containerPort").(int)))
	ann := dig(t, dep, "spec", "template", "metadata", "annotations").(doc)
	assert.Equal(t, "true", ann["prometheus.io/scrape"])
	assert.Equal(t, metricsPort, ann["prometheus.io/port"])
	assert.Equal(t, "/metrics", ann["prometheus.io/path"])
	for _, p := range dig(t, svc, "spec", "ports").([]any) {
		assert.NotEqual(t, "metrics", dig(t, p, "targetPort"), "the Service never exposes metrics or pprof")
		assert.NotEqual(t, metricsPort, itoa(dig(t, p, "port").(int)))
	}

	// Three replicas on one database: limits shared, and cf-connecting-ip
	// believed only from the ingress.
	assert.Equal(t, "postgres", cm["PETAL_LIMITS"], "replicas share their limits")
	var proxies []netip.Prefix
	proxies, err = config.ParseCIDRs(cm["PETAL_TRUSTED_PROXIES"].(string))
	require.NoError(t, err)
	assert.NotEmpty(t, proxies, "the ingress's range is trusted")
}

// What issue 31 added around the Deployment: a disruption budget, an
// autoscaler, a startup probe, an image pinned by the build and a network
// policy allowing only what petal is reached by and calls.
func TestKubernetesScaleAndSafety(t *testing.T) {
	t.Parallel()
	objs := k8sObjects(t)
	for _, kind := range []string{"PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy", "Kustomization"} {
		require.Len(t, objs[kind], 1, "one %s", kind)
	}
	dep := objs["Deployment"][0]
	podLabels := dig(t, dep, "spec", "template", "metadata", "labels").(doc)
	replicas := dig(t, dep, "spec", "replicas").(int)
	c := dig(t, dep, "spec", "template", "spec", "containers", 0)

	pdb := objs["PodDisruptionBudget"][0]
	assert.Equal(t, podLabels, dig(t, pdb, "spec", "selector", "matchLabels"), "the budget covers the serving pods")
	assert.Equal(t, 1, dig(t, pdb, "spec", "maxUnavailable"), "one replica evicted at a time")

	hpa := objs["HorizontalPodAutoscaler"][0]
	assert.Equal(t, "autoscaling/v2", hpa["apiVersion"])
	assert.Equal(t, "Deployment", dig(t, hpa, "spec", "scaleTargetRef", "kind"))
	assert.Equal(t, dig(t, dep, "metadata", "name"), dig(t, hpa, "spec", "scaleTargetRef", "name"))
	minReplicas := dig(t, hpa, "spec", "minReplicas").(int)
	assert.Equal(t, replicas, minReplicas, "never fewer than the Deployment's replicas")
	assert.Greater(t, dig(t, hpa, "spec", "maxReplicas").(int), minReplicas)
	assert.Greater(t, minReplicas, dig(t, pdb, "spec", "maxUnavailable").(int), "a drain never empties the Service")
	assert.Equal(t, "cpu", dig(t, hpa, "spec", "metrics", 0, "resource", "name"))
	assert.NotEmpty(t, dig(t, c, "resources", "requests", "cpu"), "CPU utilization is a share of the request")

	assert.Equal(t, "/api/v1/info", dig(t, c, "startupProbe", "httpGet", "path"), "starting needs no database either")
	startup := dig(t, c, "startupProbe", "periodSeconds").(int) * dig(t, c, "startupProbe", "failureThreshold").(int)
	assert.GreaterOrEqual(t, startup, 60, "a slow start has a minute at least")
	assert.Nil(t, dig(t, c, "livenessProbe", "initialDelaySeconds"), "the startup probe replaces the delay")

	// Images: one, never latest, and pin.sh pins all of them to a build.
	job := objs["Job"][0]
	jc := dig(t, job, "spec", "template", "spec", "containers", 0)
	image := dig(t, c, "image").(string)
	repo, tag, ok := strings.Cut(image, ":")
	require.True(t, ok, "%s has a tag", image)
	assert.NotEqual(t, "latest", tag)
	kust := objs["Kustomization"][0]
	assert.Equal(t, repo, dig(t, kust, "images", 0, "name"))
	assert.NotEqual(t, "latest", dig(t, kust, "images", 0, "newTag"))
	resources := dig(t, kust, "resources").([]any)
	for _, r := range resources {
		_, err := os.Stat(filepath.Join(deployDir, "k8s", r.(string)))
		assert.NoError(t, err, "the kustomization's %s exists", r)
	}
	for _, f := range []string{"deployment.yaml", "service.yaml", "configmap.yaml", "pdb.yaml", "hpa.yaml", "networkpolicy.yaml"} {
		assert.Contains(t, resources, f)
	}
	assert.NotContains(t, resources, "secret.example.yaml", "placeholders are never applied")
	pinned := t.TempDir()
	files, err := filepath.Glob(filepath.Join(deployDir, "k8s", "*"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(pinned, filepath.Base(f)), b, 0o755))
	}
	out, err := exec.Command("bash", filepath.Join(pinned, "pin.sh"), "3f2a9c1").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, name := range []string{"deployment.yaml", "migrate-job.yaml"} {
		d := yamlDocs(t, filepath.Join(pinned, name))[0]
		assert.Equal(t, repo+":3f2a9c1", dig(t, d, "spec", "template", "spec", "containers", 0, "image"), name)
	}
	assert.Equal(t, "3f2a9c1", dig(t, yamlDocs(t, filepath.Join(pinned, "kustomization.yaml"))[0], "images", 0, "newTag"))
	for _, bad := range []string{"latest", "", "a b", "x;rm"} {
		assert.Error(t, exec.Command("bash", filepath.Join(pinned, "pin.sh"), bad).Run(), "pin.sh refuses %q", bad)
	}
	assert.Equal(t, image, dig(t, jc, "image"))

	// The network policy: in on petal's two ports only, out to DNS, the
	// database and public web addresses, never the cluster's or the cloud's.
	np := objs["NetworkPolicy"][0]
	for k, v := range dig(t, np, "spec", "podSelector", "matchLabels").(doc) {
		assert.Equal(t, podLabels[k], v, "the policy selects petal's pods")
	}
	assert.ElementsMatch(t, []any{"Ingress", "Egress"}, dig(t, np, "spec", "policyTypes"))
	portsOf := func(rules []any) (ports []string) {
		for _, r := range rules {
			for _, p := range dig(t, r, "ports").([]any) {
				ports = append(ports, fmt.Sprintf("%v/%v", dig(t, p, "protocol"), dig(t, p, "port")))
			}
		}
		return ports
	}
	var containerPorts []string
	for _, p := range dig(t, c, "ports").([]any) {
		containerPorts = append(containerPorts, fmt.Sprintf("TCP/%d", dig(t, p, "containerPort")))
	}
	assert.ElementsMatch(t, containerPorts, portsOf(dig(t, np, "spec", "ingress").([]any)), "in: the app's and the metrics' ports only")
	egress := dig(t, np, "spec", "egress").([]any)
	assert.ElementsMatch(t, []string{"UDP/53", "TCP/53", "TCP/5432", "TCP/6432", "TCP/443", "TCP/80"}, portsOf(egress))
	web := egress[len(egress)-1]
	assert.Equal(t, "0.0.0.0/0", dig(t, web, "to", 0, "ipBlock", "cidr"))
	except := dig(t, web, "to", 0, "ipBlock", "except").([]any)
	for _, private := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"} {
		assert.Contains(t, except, private, "the web rule never reaches %s", private)
	}
	// Every service petal calls by default is on a port the web rule opens.
	webPorts := portsOf([]any{web})
	for _, name := range []string{"NEAR_AI_BASE_URL", "PETAL_NEAR_RPC_MAINNET", "PETAL_NEAR_RPC_TESTNET", "PETAL_ONECLICK_URL", "PETAL_SEARCH_URL"} {
		i := slices.IndexFunc(config.Variables, func(v config.Variable) bool { return v.Name == name })
		require.GreaterOrEqual(t, i, 0, name)
		u, err := url.Parse(config.Variables[i].Default)
		require.NoError(t, err)
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		assert.Contains(t, webPorts, "TCP/"+port, "%s (%s) is reachable", name, u)
	}
}

// The image's build context leaves out history, local data and secrets, and
// keeps everything go build needs.
func TestDockerignore(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../.dockerignore")
	require.NoError(t, err)
	var patterns []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	excluded := func(name string) bool {
		out := false
		for _, p := range patterns {
			negate := strings.HasPrefix(p, "!")
			p = strings.TrimPrefix(strings.TrimPrefix(p, "!"), "/")
			p = strings.TrimPrefix(p, "**/")
			if ok, _ := filepath.Match(p, name); ok {
				out = !negate
			}
		}
		return out
	}
	for _, name := range []string{".git", ".petal", ".env", ".env.local"} {
		assert.True(t, excluded(name), "%s stays out of the image's context", name)
	}
	for _, name := range []string{"go.mod", "go.sum", "cmd", "app", "adapters", "domain", "ports", "migrations", ".env.example"} {
		assert.False(t, excluded(name), "%s is needed to build", name)
	}
}

func TestComposeFile(t *testing.T) {
	t.Parallel()
	docs := yamlDocs(t, filepath.Join(deployDir, "compose.yaml"))
	require.Len(t, docs, 1)
	services := dig(t, docs[0], "services").(doc)
	require.Contains(t, services, "postgres")
	require.Contains(t, services, "petal")
	for name, s := range services {
		assert.NotEmpty(t, dig(t, s, "healthcheck", "test"), "%s has a health check", name)
	}
	petal := services["petal"]
	assert.Equal(t, []any{"CMD", "/usr/local/bin/petal", "health"}, dig(t, petal, "healthcheck", "test"))
	assert.Equal(t, "service_healthy", dig(t, petal, "depends_on", "postgres", "condition"))
	assert.Equal(t, "deploy/Dockerfile", dig(t, petal, "build", "dockerfile"))
	assert.Equal(t, "..", dig(t, petal, "build", "context"))
	env := dig(t, petal, "environment").(doc)
	for name := range env {
		assert.True(t, knownVariable(name), "%s is not a variable petal reads", name)
	}
	assert.Contains(t, env["DATABASE_URL"], "@postgres:5432/")
	assert.Equal(t, "0.0.0.0:8787", env["PETAL_ADDR"])
	assert.Contains(t, dig(t, petal, "ports"), "8787:8787")
	assert.Equal(t, "0.0.0.0:9090", env["PETAL_METRICS_ADDR"])
	assert.Contains(t, dig(t, petal, "ports"), "127.0.0.1:9090:9090", "metrics and pprof on loopback only")
	assert.Equal(t, "true", dig(t, petal, "labels", "prometheus.io/scrape"))
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	require.NoError(t, err)
	df := string(b)
	froms := regexp.MustCompile(`(?m)^FROM `).FindAllStringIndex(df, -1)
	assert.GreaterOrEqual(t, len(froms), 2, "multi-stage")
	assert.Regexp(t, `(?m)^RUN CGO_ENABLED=0 go build .*-X github.com/petal-near/petal/app/toolkit.BuildID=\$\{BUILD_ID\}.* ./cmd/petal$`, df,
		"a static binary with its build id stamped (the line .ci/run builds with)")
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(df)
	require.NotNil(t, user, "a USER line")
	assert.NotContains(t, []string{"root", "0", "0:0"}, user[1], "runs as a non-root user")
	assert.Regexp(t, `(?m)^EXPOSE 8787$`, df)
	assert.Regexp(t, `(?m)^HEALTHCHECK .*"health"\]$`, df)
	assert.True(t, strings.Contains(df, `ENTRYPOINT ["/usr/local/bin/petal"]`))
}

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// The Taskfile parses and has the tasks the README promises; its test task
// and CI run the README's test command.
func TestTaskfileAndTheREADMEAgree(t *testing.T) {
	t.Parallel()
	docs := yamlDocs(t, "../../Taskfile.yml")
	require.Len(t, docs, 1)
	tasks := dig(t, docs[0], "tasks").(doc)
	for _, name := range []string{"run", "test", "lint", "wire", "migrate", "bench"} {
		require.Contains(t, tasks, name)
		assert.NotEmpty(t, dig(t, tasks[name], "cmds"), name)
		assert.NotEmpty(t, dig(t, tasks[name], "desc"), name)
	}
	for _, cmd := range dig(t, tasks["lint"], "cmds").([]any) {
		_, isString := cmd.(string)
		assert.True(t, isString, "lint commands are plain strings: %v", cmd)
	}

	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	// The first screen: two sentences, then the two commands as indented code.
	firstScreen := string(readme[:min(len(readme), 1200)])
	assert.Contains(t, firstScreen, "\n    go run ./cmd/petal serve\n")
	testCmd := "go test ./..."
	assert.Contains(t, firstScreen, "\n    "+testCmd+"\n")
	assert.Contains(t, firstScreen, "docs/architecture.md")
	assert.Contains(t, firstScreen, "docs/operations.md")

	ci, err := os.ReadFile("../../.ci/run")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(testCmd)+`$`, string(ci), ".ci/run runs the README's test command as it is")
	assert.Contains(t, dig(t, tasks["test"], "cmds", 0), testCmd)
	assert.Contains(t, dig(t, tasks["run"], "cmds", 0), "go run ./cmd/petal serve")
}
