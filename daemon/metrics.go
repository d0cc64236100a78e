package daemon

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// metrics counts what the daemon does, exposed in the Prometheus text
// format at /metrics.
type metrics struct {
	mu       sync.Mutex
	pushes   int64
	deploys  summary
	index    summary
	indexErr int64
	requests map[[2]string]*summary // route, status
}

type summary struct {
	count int64
	sum   float64
}

func (s *summary) add(d time.Duration) { s.count++; s.sum += d.Seconds() }

func newMetrics() *metrics { return &metrics{requests: map[[2]string]*summary{}} }

func (m *metrics) deployed(d time.Duration) {
	m.mu.Lock()
	m.deploys.add(d)
	m.mu.Unlock()
}

func (m *metrics) indexed(d time.Duration, err error) {
	m.mu.Lock()
	m.index.add(d)
	if err != nil {
		m.indexErr++
	}
	m.mu.Unlock()
}

func (m *metrics) observeRequest(route string, status int, d time.Duration) {
	k := [2]string{route, strconv.Itoa(status)}
	m.mu.Lock()
	s := m.requests[k]
	if s == nil {
		s = &summary{}
		m.requests[k] = s
	}
	s.add(d)
	m.mu.Unlock()
}

// countPushes wraps the git endpoint to count receive-pack requests.
func (m *metrics) countPushes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			m.mu.Lock()
			m.pushes++
			m.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (m *metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintf(w, "# HELP quire_pushes_total Pushes received by the git endpoint.\n# TYPE quire_pushes_total counter\nquire_pushes_total %d\n", m.pushes)
	writeSummary(w, "quire_deploy_seconds", "Time to build and swap in a new revision.", "", m.deploys)
	writeSummary(w, "quire_index_seconds", "Time of one agent's index run.", "", m.index)
	fmt.Fprintf(w, "# HELP quire_index_errors_total Failed index runs.\n# TYPE quire_index_errors_total counter\nquire_index_errors_total %d\n", m.indexErr)
	keys := make([][2]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	fmt.Fprint(w, "# HELP quire_api_request_seconds Local API request latency.\n# TYPE quire_api_request_seconds summary\n")
	for _, k := range keys {
		labels := fmt.Sprintf("{route=%q,code=%q}", k[0], k[1])
		s := m.requests[k]
		fmt.Fprintf(w, "quire_api_request_seconds_sum%s %g\nquire_api_request_seconds_count%s %d\n", labels, s.sum, labels, s.count)
	}
}

func writeSummary(w io.Writer, name, help, labels string, s summary) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s summary\n%s_sum%s %g\n%s_count%s %d\n", name, help, name, name, labels, s.sum, name, labels, s.count)
}
