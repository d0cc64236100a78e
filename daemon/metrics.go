package daemon

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// metrics counts what the daemon does, exposed in the Prometheus text
// format at /metrics. Latencies are histograms, so that an operator can
// read percentiles off them; recording one takes no lock.
type metrics struct {
	pushes   atomic.Int64
	deploys  histogram
	index    histogram
	indexErr atomic.Int64
	requests sync.Map // requestKey → *histogram
}

type requestKey struct {
	route  string
	status int
}

// latencyBuckets are the upper bounds, in seconds, of every histogram's
// buckets: from a cached prompt (≈ 0.1 ms) to a large index run.
var latencyBuckets = [...]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// histogram is a Prometheus histogram over latencyBuckets.
type histogram struct {
	counts [len(latencyBuckets) + 1]atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	nanos  atomic.Int64                           // sum of the observations
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i, _ := slices.BinarySearch(latencyBuckets[:], s) // first bound ≥ s
	h.counts[i].Add(1)
	h.nanos.Add(int64(d))
}

// write prints h as the metric name with labels (without braces, may be
// empty).
func (h *histogram) write(w io.Writer, name, labels string) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var total uint64
	for i := range h.counts {
		total += h.counts[i].Load()
		le := "+Inf"
		if i < len(latencyBuckets) {
			le = strconv.FormatFloat(latencyBuckets[i], 'g', -1, 64)
		}
		fmt.Fprintf(w, "%s_bucket{%s%sle=%q} %d\n", name, labels, sep, le, total)
	}
	if labels != "" {
		labels = "{" + labels + "}"
	}
	fmt.Fprintf(w, "%s_sum%s %g\n%s_count%s %d\n", name, labels, time.Duration(h.nanos.Load()).Seconds(), name, labels, total)
}

func newMetrics() *metrics { return &metrics{} }

func (m *metrics) deployed(d time.Duration) { m.deploys.observe(d) }

func (m *metrics) indexed(d time.Duration, err error) {
	m.index.observe(d)
	if err != nil {
		m.indexErr.Add(1)
	}
}

func (m *metrics) observeRequest(route string, status int, d time.Duration) {
	k := requestKey{route, status}
	h, ok := m.requests.Load(k)
	if !ok {
		h, _ = m.requests.LoadOrStore(k, new(histogram))
	}
	h.(*histogram).observe(d)
}

// countPushes wraps the git endpoint to count receive-pack requests.
func (m *metrics) countPushes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			m.pushes.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

func (m *metrics) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP quire_pushes_total Pushes received by the git endpoint.\n# TYPE quire_pushes_total counter\nquire_pushes_total %d\n", m.pushes.Load())
	fmt.Fprint(w, "# HELP quire_deploy_seconds Time to build and swap in a new revision.\n# TYPE quire_deploy_seconds histogram\n")
	m.deploys.write(w, "quire_deploy_seconds", "")
	fmt.Fprint(w, "# HELP quire_index_seconds Time of one agent's index run.\n# TYPE quire_index_seconds histogram\n")
	m.index.write(w, "quire_index_seconds", "")
	fmt.Fprintf(w, "# HELP quire_index_errors_total Failed index runs.\n# TYPE quire_index_errors_total counter\nquire_index_errors_total %d\n", m.indexErr.Load())
	var keys []requestKey
	m.requests.Range(func(k, _ any) bool {
		keys = append(keys, k.(requestKey))
		return true
	})
	slices.SortFunc(keys, func(a, b requestKey) int {
		return cmp.Or(cmp.Compare(a.route, b.route), cmp.Compare(a.status, b.status))
	})
	fmt.Fprint(w, "# HELP quire_api_request_seconds Local API request latency.\n# TYPE quire_api_request_seconds histogram\n")
	for _, k := range keys {
		h, _ := m.requests.Load(k)
		h.(*histogram).write(w, "quire_api_request_seconds", fmt.Sprintf("route=%q,code=\"%d\"", k.route, k.status))
	}
}
