package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const manifestDir = "../../deploy/kubernetes"

// readManifests decodes every document of deploy/kubernetes/*.yaml
// strictly (an unknown or misspelt field is an error) into its k8s.io/api
// type; a kind without a case here is an error too.
func readManifests(t *testing.T) ([]*appsv1.Deployment, []*corev1.Service) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", manifestDir, err)
	}
	var deps []*appsv1.Deployment
	var svcs []*corev1.Service
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "apps/v1 Deployment":
				d := &appsv1.Deployment{}
				deps, obj = append(deps, d), d
			case "v1 Service":
				s := &corev1.Service{}
				svcs, obj = append(svcs, s), s
			default:
				t.Fatalf("%s document %d: unexpected %q %q", f, i, tm.APIVersion, tm.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s document %d (%s): %v", f, i, tm.Kind, err)
			}
		}
	}
	return deps, svcs
}

// TestKubernetesManifests validates deploy/kubernetes: strict decoding
// into the real API types; the govllm container's args are a command line
// serve accepts; readiness and startup probe /health, liveness /ping, on
// a declared port, and those paths answer 200 on a real server; the grace
// period exceeds --shutdown-timeout plus the connections' closing time;
// the Service selects the pods and targets a declared port.
func TestKubernetesManifests(t *testing.T) {
	noLeaks(t)
	deps, svcs := readManifests(t)
	if len(deps) != 1 || len(svcs) != 1 {
		t.Fatalf("%d Deployments and %d Services, want one of each", len(deps), len(svcs))
	}
	d, svc := deps[0], svcs[0]
	paths := checkDeployment(t, d)
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods do not carry", k, v)
		}
	}
	for _, p := range svc.Spec.Ports {
		if !hasPort(d.Spec.Template.Spec.Containers[0], p.TargetPort.String()) {
			t.Errorf("the Service targets port %s, which the container does not declare", p.TargetPort.String())
		}
	}
	url, _ := startServe(t, testServeConfig())
	for _, p := range paths {
		if r := do(t, mustRequest(t, "GET", url+p)); r.status != http.StatusOK {
			t.Errorf("probe path %s answers %d on a serving server, want 200", p, r.status)
		}
	}
}

// checkDeployment checks the govllm container of d and returns its probe
// paths.
func checkDeployment(t *testing.T, d *appsv1.Deployment) []string {
	t.Helper()
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 || spec.Containers[0].Name != "govllm" {
		t.Fatalf("want one container named govllm, got %d", len(spec.Containers))
	}
	c := spec.Containers[0]
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the Deployment selects %s=%s, which its pods do not carry", k, v)
		}
	}
	cfg, err := parseServeArgs(c.Args, &strings.Builder{})
	if err != nil {
		t.Fatalf("the container's args %q: %v", c.Args, err)
	}
	grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
	if grace <= cfg.ShutdownTimeout+finishTimeout {
		t.Errorf("terminationGracePeriodSeconds %v ≤ --shutdown-timeout %v + %v to close connections", grace, cfg.ShutdownTimeout, finishTimeout)
	}
	var paths []string
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/health"}, {"liveness", c.LivenessProbe, "/ping"}, {"startup", c.StartupProbe, "/health"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path || !hasPort(c, p.probe.HTTPGet.Port.String()) {
			t.Errorf("%s probe on %s port %s, want %s on a declared port", p.name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port.String(), p.path)
		}
		paths = append(paths, p.probe.HTTPGet.Path)
	}
	return paths
}

// hasPort reports whether c declares port (a name or a number).
func hasPort(c corev1.Container, port string) bool {
	for _, p := range c.Ports {
		if p.Name == port || port == strconv.Itoa(int(p.ContainerPort)) {
			return true
		}
	}
	return false
}
