package main

import (
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

const (
	deployDir   = "../../deploy"
	manifestDir = deployDir + "/kubernetes"
)

// scaledObject is the part of KEDA's keda.sh/v1alpha1 ScaledObject the
// manifests use, with KEDA's field names (its Go module is not imported:
// its API package pulls in KEDA's controllers).
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ScaleTargetRef struct {
			APIVersion string `json:"apiVersion,omitempty"`
			Kind       string `json:"kind,omitempty"`
			Name       string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount,omitempty"`
		MaxReplicaCount *int32 `json:"maxReplicaCount,omitempty"`
		PollingInterval *int32 `json:"pollingInterval,omitempty"`
		CooldownPeriod  *int32 `json:"cooldownPeriod,omitempty"`
		Triggers        []struct {
			Type     string            `json:"type"`
			Metadata map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

// inferencePool is the Gateway API Inference Extension's
// inference.networking.k8s.io/v1 InferencePool spec, with its field names
// (api/v1/inferencepool_types.go; the module is not on the module proxy).
type inferencePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		TargetPorts []struct {
			Number int32 `json:"number"`
		} `json:"targetPorts"`
		EndpointPickerRef struct {
			Group *string `json:"group,omitempty"`
			Kind  string  `json:"kind,omitempty"`
			Name  string  `json:"name"`
			Port  *struct {
				Number int32 `json:"number"`
			} `json:"port,omitempty"`
			FailureMode string `json:"failureMode,omitempty"`
		} `json:"endpointPickerRef"`
	} `json:"spec"`
}

// manifests are the objects of deploy/kubernetes, by kind.
type manifests struct {
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	podMonitors     []*monitoringv1.PodMonitor
	serviceMonitors []*monitoringv1.ServiceMonitor
	hpas            []*autoscalingv2.HorizontalPodAutoscaler
	scaledObjects   []*scaledObject
	pools           []*inferencePool
	routes          []*gatewayv1.HTTPRoute
}

// object returns a new object of kind "apiVersion Kind" appended to its
// list, or nil for a kind without a case here.
func (m *manifests) object(kind string) any {
	switch kind {
	case "apps/v1 Deployment":
		return appendNew(&m.deployments)
	case "v1 Service":
		return appendNew(&m.services)
	case "monitoring.coreos.com/v1 PodMonitor":
		return appendNew(&m.podMonitors)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		return appendNew(&m.serviceMonitors)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return appendNew(&m.hpas)
	case "keda.sh/v1alpha1 ScaledObject":
		return appendNew(&m.scaledObjects)
	case "inference.networking.k8s.io/v1 InferencePool":
		return appendNew(&m.pools)
	case "gateway.networking.k8s.io/v1 HTTPRoute":
		return appendNew(&m.routes)
	}
	return nil
}

func appendNew[T any](list *[]*T) *T {
	v := new(T)
	*list = append(*list, v)
	return v
}

// readManifests decodes every document of deploy/kubernetes/**/*.yaml
// strictly (an unknown or misspelt field is an error) into its API type;
// a kind without a case here is an error too.
func readManifests(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{}
	err := filepath.WalkDir(manifestDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s document %d: %v", path, i, err)
			}
			obj := m.object(tm.APIVersion + " " + tm.Kind)
			if obj == nil {
				t.Fatalf("%s document %d: unexpected %q %q", path, i, tm.APIVersion, tm.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s document %d (%s): %v", path, i, tm.Kind, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.deployments) != 1 || len(m.services) != 1 {
		t.Fatalf("%d Deployments and %d Services, want one of each", len(m.deployments), len(m.services))
	}
	return m
}

// TestKubernetesManifests validates deploy/kubernetes: strict decoding
// into the real API types; the govllm container's args are a command line
// serve accepts; readiness and startup probe /health, liveness /ping, on
// a declared port, and those paths answer 200 on a real server; the grace
// period exceeds --shutdown-timeout plus the connections' closing time;
// the Service selects the pods and targets a declared port.
func TestKubernetesManifests(t *testing.T) {
	noLeaks(t)
	m := readManifests(t)
	d, svc := m.deployments[0], m.services[0]
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

// selects reports whether every label of sel is on labels.
func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}
