package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// exposition is a live /metrics scrape: the label sets of every sample
// name, as Prometheus stores them (histograms as _bucket, _sum, _count).
type exposition map[string][]map[string]string

var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? `)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"((?:[^"\\]|\\.)*)"`)
	// promRef is a name in a PromQL expression with its optional selector;
	// a metric is a name with a colon, a selector or a range after it
	// (function names take "(", label names of by() are bare).
	promRef = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*(?::[a-zA-Z0-9_:]+)?)(\{[^}]*\})?(\[)?`)
)

// targetLabels are added by Prometheus (target and relabelling), not by
// the exporter, so a query may match on them.
var targetLabels = []string{"namespace", "pod", "instance", "job", "service", "container"}

// scrapeServe starts `govllm serve` (the built-in model), serves one
// completion so every series has a sample, and scrapes /metrics.
func scrapeServe(t *testing.T) exposition {
	t.Helper()
	url, _ := startServe(t, testServeConfig())
	if r := post(t, url, "/v1/completions", `{"prompt":"hi","max_tokens":2}`); r.status != 200 {
		t.Fatalf("completion: %d %s", r.status, r.body)
	}
	r := do(t, mustRequest(t, "GET", url+"/metrics"))
	exp := exposition{}
	sc := bufio.NewScanner(strings.NewReader(r.body))
	for sc.Scan() {
		m := sampleLine.FindStringSubmatch(sc.Text())
		if m == nil || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		labels := map[string]string{}
		for _, p := range labelPair.FindAllStringSubmatch(m[3], -1) {
			labels[p[1]] = p[3]
		}
		exp[m[1]] = append(exp[m[1]], labels)
	}
	if len(exp) == 0 {
		t.Fatal("empty /metrics")
	}
	return exp
}

// checkQuery reports the metrics of a PromQL query that the exposition
// lacks, or lacks with a label the query matches on (labels Prometheus
// adds itself aside), and fails when the query names no metric at all.
func (e exposition) checkQuery(t *testing.T, where, query string) {
	t.Helper()
	n := 0
	for _, m := range promRef.FindAllStringSubmatch(query, -1) {
		name, sel, rng := m[1], m[2], m[3]
		if !strings.Contains(name, ":") && sel == "" && rng == "" {
			continue
		}
		n++
		var want []string
		for _, p := range labelPair.FindAllStringSubmatch(sel, -1) {
			if !slices.Contains(targetLabels, p[1]) {
				want = append(want, p[1])
			}
		}
		if !slices.ContainsFunc(e[name], func(labels map[string]string) bool {
			return !slices.ContainsFunc(want, func(l string) bool { _, ok := labels[l]; return !ok })
		}) {
			t.Errorf("%s: %s{%s} is not in govllm's /metrics (query %q)", where, name, strings.Join(want, ","), query)
		}
	}
	if n == 0 {
		t.Errorf("%s: no metric found in %q", where, query)
	}
}

// vllmDashboardPanels are the panel titles of vLLM's reference dashboard
// (examples/online_serving/prometheus_grafana/grafana.json).
var vllmDashboardPanels = []string{"E2E Request Latency", "Token Throughput", "Time Per Output Token Latency", "Scheduler State",
	"Time To First Token Latency", "Cache Utilization", "Request Prompt Length", "Request Generation Length", "Finish Reason",
	"Queue Time", "Requests Prefill and Decode Time", "Max Generation Token in Sequence Group"}

// TestGrafanaDashboard: deploy/grafana's dashboard has every panel of
// vLLM's reference dashboard, and every metric its queries use (with the
// labels they match on) is in a live scrape of govllm's /metrics.
func TestGrafanaDashboard(t *testing.T) {
	noLeaks(t)
	b, err := os.ReadFile(filepath.Join(deployDir, "grafana", "govllm-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	exp := scrapeServe(t)
	var titles []string
	for _, p := range dash.Panels {
		titles = append(titles, p.Title)
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exp.checkQuery(t, "panel "+p.Title, tg.Expr)
		}
	}
	for _, want := range vllmDashboardPanels {
		if !slices.Contains(titles, want) {
			t.Errorf("vLLM's panel %q is missing", want)
		}
	}
}

// TestScrapingAndScalingManifests cross-checks the monitoring and scaling
// manifests with the Deployment and Service, and their queries with a live
// scrape: the Pod/ServiceMonitor select the pods or the Service and scrape
// a declared port's /metrics; the HPA scales the Deployment on the metric
// prometheus-adapter's rule publishes, from a series govllm exposes; the
// KEDA ScaledObject scales the Deployment on a query of exposed series.
func TestScrapingAndScalingManifests(t *testing.T) {
	noLeaks(t)
	m := readManifests(t)
	d, svc := m.deployments[0], m.services[0]
	pods, c := d.Spec.Template.Labels, d.Spec.Template.Spec.Containers[0]
	exp := scrapeServe(t)
	for _, pm := range m.podMonitors {
		if !selects(pm.Spec.Selector.MatchLabels, pods) {
			t.Errorf("PodMonitor %s selects %v, not the pods (%v)", pm.Name, pm.Spec.Selector.MatchLabels, pods)
		}
		for _, ep := range pm.Spec.PodMetricsEndpoints {
			if ep.Port == nil || !hasPort(c, *ep.Port) || ep.Path != "/metrics" {
				t.Errorf("PodMonitor %s scrapes port %v path %q", pm.Name, ep.Port, ep.Path)
			}
		}
	}
	for _, sm := range m.serviceMonitors {
		if !selects(sm.Spec.Selector.MatchLabels, svc.Labels) {
			t.Errorf("ServiceMonitor %s selects %v, not the Service (%v)", sm.Name, sm.Spec.Selector.MatchLabels, svc.Labels)
		}
		for _, ep := range sm.Spec.Endpoints {
			if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) || ep.Path != "/metrics" {
				t.Errorf("ServiceMonitor %s scrapes port %q path %q", sm.Name, ep.Port, ep.Path)
			}
		}
	}
	if len(m.podMonitors)+len(m.serviceMonitors) == 0 || len(m.hpas) != 1 || len(m.scaledObjects) != 1 {
		t.Fatalf("%d PodMonitors, %d ServiceMonitors, %d HPAs, %d ScaledObjects", len(m.podMonitors), len(m.serviceMonitors), len(m.hpas), len(m.scaledObjects))
	}
	hpa := m.hpas[0]
	if ref := hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != d.Name {
		t.Errorf("the HPA scales %s %s, not the Deployment", ref.Kind, ref.Name)
	}
	rules := readAdapterRules(t)
	for _, metric := range hpa.Spec.Metrics {
		if metric.Pods == nil {
			t.Fatalf("the HPA's metric %v is not a Pods metric", metric)
		}
		i := slices.IndexFunc(rules, func(r adapterRule) bool { return r.Name.As == metric.Pods.Metric.Name })
		if i < 0 {
			t.Fatalf("no prometheus-adapter rule publishes %q", metric.Pods.Metric.Name)
		}
		exp.checkQuery(t, "prometheus-adapter seriesQuery", rules[i].SeriesQuery)
	}
	so := m.scaledObjects[0]
	if so.Spec.ScaleTargetRef.Name != d.Name || len(so.Spec.Triggers) == 0 {
		t.Errorf("the ScaledObject scales %q with %d triggers", so.Spec.ScaleTargetRef.Name, len(so.Spec.Triggers))
	}
	for _, tr := range so.Spec.Triggers {
		if tr.Type != "prometheus" || tr.Metadata["serverAddress"] == "" || tr.Metadata["threshold"] == "" {
			t.Errorf("KEDA trigger %+v: want type prometheus with serverAddress and threshold", tr)
		}
		exp.checkQuery(t, "KEDA trigger", tr.Metadata["query"])
	}
}

// adapterRule is one custom rule of prometheus-adapter's configuration.
type adapterRule struct {
	SeriesQuery string `json:"seriesQuery"`
	Name        struct {
		Matches string `json:"matches"`
		As      string `json:"as"`
	} `json:"name"`
	MetricsQuery string         `json:"metricsQuery"`
	Resources    map[string]any `json:"resources"`
}

// readAdapterRules reads deploy/prometheus-adapter/values.yaml.
func readAdapterRules(t *testing.T) []adapterRule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "prometheus-adapter", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Prometheus map[string]any `json:"prometheus"`
		Rules      struct {
			Default bool          `json:"default"`
			Custom  []adapterRule `json:"custom"`
		} `json:"rules"`
	}
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Rules.Custom {
		if !regexp.MustCompile(r.Name.Matches).MatchString(promRef.FindStringSubmatch(r.SeriesQuery)[1]) {
			t.Errorf("rule %q: its name pattern %q does not match its series", r.Name.As, r.Name.Matches)
		}
	}
	return v.Rules.Custom
}

// eppMetrics are the series the Inference Extension's endpoint picker
// reads from a vLLM model server (its defaults for vLLM: the queue, the
// running requests, the KV-cache usage, and the block size and count of
// vllm:cache_config_info for prefix affinity).
var eppMetrics = []string{"vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc",
	`vllm:cache_config_info{block_size!="",num_gpu_blocks!=""}`}

// TestGatewayManifests: the InferencePool selects the govllm pods on their
// container port, the HTTPRoute sends /v1 to it, and govllm's /metrics has
// what the pool's endpoint picker reads.
func TestGatewayManifests(t *testing.T) {
	noLeaks(t)
	exp := scrapeServe(t)
	for _, q := range eppMetrics {
		exp.checkQuery(t, "endpoint picker", q)
	}
	m := readManifests(t)
	d := m.deployments[0]
	c := d.Spec.Template.Spec.Containers[0]
	if len(m.pools) != 1 || len(m.routes) != 1 {
		t.Fatalf("%d InferencePools, %d HTTPRoutes, want one of each", len(m.pools), len(m.routes))
	}
	pool := m.pools[0].Spec
	if !selects(pool.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("the InferencePool selects %v, not the pods", pool.Selector.MatchLabels)
	}
	if len(pool.TargetPorts) != 1 || !hasPort(c, strconv.Itoa(int(pool.TargetPorts[0].Number))) {
		t.Errorf("the InferencePool targets ports %v, want the container's", pool.TargetPorts)
	}
	if pool.EndpointPickerRef.Name == "" || !slices.Contains([]string{"", "FailOpen", "FailClose"}, pool.EndpointPickerRef.FailureMode) {
		t.Errorf("endpointPickerRef %+v", pool.EndpointPickerRef)
	}
	var refs []string
	for _, r := range m.routes[0].Spec.Rules {
		for _, b := range r.BackendRefs {
			refs = append(refs, string(*b.Group)+"/"+string(*b.Kind)+"/"+string(b.Name))
		}
	}
	if want := "inference.networking.k8s.io/InferencePool/" + m.pools[0].Name; !slices.Contains(refs, want) {
		t.Errorf("the HTTPRoute's backends %v lack %s", refs, want)
	}
}

// TestBalancerConfigs: the nginx and Envoy examples balance the replicas
// the Prometheus example scrapes (each one directly); Envoy probes /health
// actively and retries a 503 on another host; and, where nginx or Envoy
// is installed, each accepts its configuration (nginx -t, envoy --mode
// validate).
func TestBalancerConfigs(t *testing.T) {
	targets := promTargets(t)
	nginxConf := filepath.Join(deployDir, "nginx", "govllm.conf")
	b, err := os.ReadFile(nginxConf)
	if err != nil {
		t.Fatal(err)
	}
	var upstream []string
	for _, m := range regexp.MustCompile(`(?m)^\s*server\s+(\S+:\d+)`).FindAllStringSubmatch(string(b), -1) {
		upstream = append(upstream, m[1])
	}
	if len(upstream) < 2 || !slices.Equal(targets, upstream) {
		t.Errorf("Prometheus scrapes %v, nginx balances %v", targets, upstream)
	}
	if !strings.Contains(string(b), "proxy_next_upstream error timeout http_502 http_503 non_idempotent") {
		t.Error("nginx does not retry a 503 (a POST too) on another replica")
	}
	envoyConf := filepath.Join(deployDir, "envoy", "envoy.yaml")
	if hosts := envoyHosts(t, envoyConf); !slices.Equal(targets, hosts) {
		t.Errorf("Prometheus scrapes %v, Envoy balances %v", targets, hosts)
	}
	checked := 0
	for _, c := range [][]string{{"nginx", "-t", "-c", nginxConf}, {"envoy", "--mode", "validate", "-c", envoyConf}} {
		bin, err := exec.LookPath(c[0])
		if err != nil {
			t.Logf("%s is not installed: its own check of the configuration is skipped", c[0])
			continue
		}
		checked++
		abs, _ := filepath.Abs(c[len(c)-1])
		if out, err := exec.Command(bin, append(c[1:len(c)-1], abs)...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	t.Logf("%d of 2 balancers checked their own configuration", checked)
}

// promTargets are the static targets of deploy/prometheus/prometheus.yml.
func promTargets(t *testing.T) []string {
	t.Helper()
	pb, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var prom struct {
		ScrapeConfigs []struct {
			MetricsPath   string `json:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(pb, &prom); err != nil || len(prom.ScrapeConfigs) != 1 || len(prom.ScrapeConfigs[0].StaticConfigs) != 1 ||
		prom.ScrapeConfigs[0].MetricsPath != "/metrics" {
		t.Fatalf("prometheus.yml: %v %+v", err, prom)
	}
	return prom.ScrapeConfigs[0].StaticConfigs[0].Targets
}

// envoyHosts reads the Envoy example's govllm cluster: its endpoints
// (host:port), after checking its active health check probes /health and
// its route retries 503 on another host.
func envoyHosts(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type sockAddr struct {
		SocketAddress struct {
			Address   string `json:"address"`
			PortValue int    `json:"port_value"`
		} `json:"socket_address"`
	}
	var conf struct {
		StaticResources struct {
			Clusters []struct {
				LoadAssignment struct {
					Endpoints []struct {
						LBEndpoints []struct {
							Endpoint struct {
								Address sockAddr `json:"address"`
							} `json:"endpoint"`
						} `json:"lb_endpoints"`
					} `json:"endpoints"`
				} `json:"load_assignment"`
				HealthChecks []struct {
					HTTPHealthCheck struct {
						Path string `json:"path"`
					} `json:"http_health_check"`
				} `json:"health_checks"`
			} `json:"clusters"`
		} `json:"static_resources"`
	}
	if err := yaml.Unmarshal(b, &conf); err != nil || len(conf.StaticResources.Clusters) != 1 {
		t.Fatalf("%s: %v", path, err)
	}
	cl := conf.StaticResources.Clusters[0]
	if len(cl.HealthChecks) != 1 || cl.HealthChecks[0].HTTPHealthCheck.Path != "/health" {
		t.Errorf("Envoy's health checks %+v: want one HTTP check of /health", cl.HealthChecks)
	}
	for _, want := range []string{"retriable_status_codes: [503]", "retry_on: connect-failure,refused-stream,retriable-status-codes", "envoy.retry_host_predicates.previous_hosts"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Envoy's retry policy lacks %q", want)
		}
	}
	var hosts []string
	for _, ep := range cl.LoadAssignment.Endpoints {
		for _, lb := range ep.LBEndpoints {
			a := lb.Endpoint.Address.SocketAddress
			hosts = append(hosts, a.Address+":"+strconv.Itoa(a.PortValue))
		}
	}
	return hosts
}
