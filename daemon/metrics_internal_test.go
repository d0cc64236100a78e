package daemon

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMetricsHistograms(t *testing.T) {
	m := newMetrics()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 250; j++ {
				m.observeRequest("POST /v1/agents/{agent}/prompt", 200, 300*time.Microsecond)
			}
		}()
	}
	wg.Wait()
	m.observeRequest("POST /v1/agents/{agent}/prompt", 200, time.Millisecond) // on a bound: in its bucket
	m.observeRequest("POST /v1/agents/{agent}/prompt", 200, 2*time.Minute)    // past the last bound
	m.observeRequest("GET /v1/status", 503, 50*time.Microsecond)
	m.indexed(2*time.Second, nil)
	m.indexed(time.Second, errTest)
	var b strings.Builder
	m.write(&b)
	out := b.String()
	const prompt = `quire_api_request_seconds_bucket{route="POST /v1/agents/{agent}/prompt",code="200",`
	for _, want := range []string{
		prompt + `le="0.00025"} 0`,
		prompt + `le="0.0005"} 1000`,
		prompt + `le="0.001"} 1001`,
		prompt + `le="60"} 1001`,
		prompt + `le="+Inf"} 1002`,
		`quire_api_request_seconds_count{route="POST /v1/agents/{agent}/prompt",code="200"} 1002`,
		`quire_api_request_seconds_bucket{route="GET /v1/status",code="503",le="0.0001"} 1`,
		`quire_index_seconds_bucket{le="1"} 1`,
		`quire_index_seconds_bucket{le="2.5"} 2`,
		"quire_index_seconds_sum 3\n",
		"quire_index_errors_total 1\n",
		"# TYPE quire_api_request_seconds histogram\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
	// Routes are sorted, so the status route comes first.
	if strings.Index(out, `route="GET /v1/status"`) > strings.Index(out, `route="POST`) {
		t.Error("request histograms are not sorted by route")
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("index failed")
