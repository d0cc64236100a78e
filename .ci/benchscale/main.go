// Command benchscale runs the scale benchmarks of issue 29 (fleet cold
// start, append growth, a push on a long history, memory search, the
// first prompt) and prints one table: each target beside the number
// measured here, with the machine's cores and load, so a deployment can
// be sized. `make bench-scale` runs it from the module's root.
//
// Sizes come from the environment; the defaults finish in a few minutes
// on 2 cores. The targets are stated for the full sizes:
//
//	QUIRE_SCALE_AGENTS=10000 QUIRE_BENCH_APPENDS=100000 QUIRE_BENCH_CHUNKS=1000000 make bench-scale
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// bench is one benchmark run: its package, its -bench pattern, its
// -benchtime and the environment it adds.
type bench struct {
	pkg, pattern, times string
	env                 []string
}

// row is one line of the table: a target beside what was measured.
type row struct {
	item, what, size, target string
	value                    func(m metrics) (string, bool) // the measured value and whether it meets the target
}

// metrics are a benchmark's reported values by unit ("ready-ms").
type metrics map[string]float64

func main() {
	agents := env("QUIRE_SCALE_AGENTS", "1000")
	appends := env("QUIRE_BENCH_APPENDS", "10000")
	chunks := env("QUIRE_BENCH_CHUNKS", "100000")
	fmt.Printf("quire bench-scale: %s, %d cores, %s/%s, %s\n", time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Printf("load before: %s\n", load())
	runs := []struct {
		b    bench
		rows []row
	}{
		{bench{"./daemon", "^BenchmarkFleetColdStart$/^agents=" + agents + "$", "1x", []string{"QUIRE_BENCH_AGENTS=" + agents}}, fleetRows(agents)},
		{bench{"./daemon", "^BenchmarkAppendGrowth$", "1x", []string{"QUIRE_BENCH_APPENDS=" + appends}}, appendRows(appends)},
		{bench{"./daemon", "^BenchmarkPushToServedLongHistory$", "3x", nil}, pushRows()},
		{bench{"./memory/memstore", "^BenchmarkSearch$/^builtin$", "200x", []string{"QUIRE_BENCH_CHUNKS=" + chunks}}, searchRows(chunks)},
		{bench{"./prompt", "^BenchmarkAssembleColdTokenize$", "1s", nil}, promptRows()},
	}
	var table [][]string
	failed := false
	for _, r := range runs {
		m, err := run(r.b)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchscale: %s %s: %v\n", r.b.pkg, r.b.pattern, err)
			failed = true
		}
		for _, rw := range r.rows {
			got, ok := "—", false
			if m != nil {
				got, ok = rw.value(m)
			}
			mark := "no"
			switch {
			case got == "—":
				mark = "—" // not measured (a benchmark that does not report it)
			case ok:
				mark = "yes"
			}
			table = append(table, []string{rw.item, rw.what, rw.size, rw.target, got, mark})
		}
	}
	fmt.Printf("load after: %s\n\n", load())
	printTable(append([][]string{{"item", "measure", "size", "target", "measured", "holds"}}, table...))
	if failed {
		os.Exit(1)
	}
}

func fleetRows(agents string) []row {
	size := agents + " agents"
	return []row{
		{"3", "ready", size, "≤ 1 s at 10,000", at("ready-ms", "%.0f ms", le(1000))},
		{"3", "fully indexed", size, "≤ 15 s at 10,000", at("indexed-ms", "%.0f ms", le(15000))},
		{"3", "RSS indexed", size, "≤ 1 GB", at("rss-MB", "%.0f MB", le(1024))},
		{"3", "disk written", size, "≤ 2× indexed (cache)", func(m metrics) (string, bool) {
			return fmt.Sprintf("%.0f MB (cache %.0f MB)", m["written-MB"], m["cache-MB"]), m["written-MB"] <= 2*m["cache-MB"]
		}},
	}
}

func appendRows(appends string) []row {
	size := appends + " appends, 32 clients"
	return []row{
		// Over the whole run: git's roll-ups come in bursts that one
		// window may hold or not.
		{"2", "daemon CPU per append", size, "≤ 0.3 ms", func(m metrics) (string, bool) {
			return fmt.Sprintf("%.2f ms (git %.2f, last window %.2f; clients %.2f)", m["cpu-ms/append"], m["git-cpu-ms/append"],
				m["last-cpu-ms/append"], m["last-client-cpu-ms/append"]), m["cpu-ms/append"] <= 0.3
		}},
		{"2", "appends/s (last window)", size, "≥ 3,000/s", func(m metrics) (string, bool) {
			return fmt.Sprintf("%.0f/s (first %.0f/s)", m["last-appends/s"], m["first-appends/s"]), m["last-appends/s"] >= 3000
		}},
		{"2", "p99 last vs first window", size, "≤ 1.2×", func(m metrics) (string, bool) {
			return fmt.Sprintf("%.1f / %.1f ms", m["last-p99-ms"], m["first-p99-ms"]), m["last-p99-ms"] <= 1.2*m["first-p99-ms"]
		}},
		{"1", "RSS under appends vs restart", size, "≤ 1.5×", func(m metrics) (string, bool) {
			return fmt.Sprintf("%.0f / %.0f MB", m["rss-MB"], m["restart-proc-rss-MB"]), m["rss-MB"] <= 1.5*m["restart-proc-rss-MB"]
		}},
		{"1", "RSS after restart vs memory text", size, "≤ 10×", func(m metrics) (string, bool) {
			return fmt.Sprintf("%.0f MB / %.1f MB", m["restart-proc-rss-MB"], m["text-MB"]), m["restart-proc-rss-MB"] <= 10*m["text-MB"]
		}},
	}
}

func pushRows() []row {
	return []row{{"4", "push → served", "10,000 commits, 5,000 files", "≤ 300 ms", func(m metrics) (string, bool) {
		t := m["push-ms"] + m["after-push-ms"]
		return fmt.Sprintf("%.0f ms", t), t <= 300
	}}}
}

func searchRows(chunks string) []row {
	size := chunks + " chunks"
	rows := []row{
		{"5", "search p50", size, "≤ 5 ms at 1M", at("p50-ms", "%.2f ms", le(5))},
		{"5", "search p99", size, "≤ 15 ms at 1M", at("p99-ms", "%.2f ms", le(15))},
		{"5", "heap", size, "≤ 1.5 GB at 1M", at("heap-MiB", "%.0f MiB", le(1536))},
		{"5", "recall vs exact", size, "≥ 0.98", at("recall@24", "%.3f", func(v float64) bool { return v >= 0.98 })},
	}
	return rows
}

func promptRows() []row {
	return []row{{"6", "first prompt, exact counts (CPU)", "~40 KB, 20 skills", "≤ 1 ms", func(m metrics) (string, bool) {
		v, ok := m["cpu-ns/op"]
		if !ok {
			v = m["ns/op"]
		}
		return fmt.Sprintf("%.2f ms", v/1e6), v <= 1e6
	}}}
}

// at formats metric unit of a run and checks it against holds; a run
// without the metric shows "—".
func at(unit, format string, holds func(float64) bool) func(metrics) (string, bool) {
	return func(m metrics) (string, bool) {
		v, ok := m[unit]
		if !ok {
			return "—", false
		}
		return fmt.Sprintf(format, v), holds(v)
	}
}

func le(limit float64) func(float64) bool { return func(v float64) bool { return v <= limit } }

// run runs b with `go test` and returns the metrics of its first result
// line.
func run(b bench) (metrics, error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", b.pattern, "-benchtime", b.times, "-timeout", "60m", b.pkg)
	cmd.Env = append(os.Environ(), b.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	fmt.Fprintf(os.Stderr, "running %s %s (%s) ...\n", b.pkg, b.pattern, strings.Join(b.env, " "))
	err := cmd.Run()
	m := parse(out.Bytes())
	if err != nil || m == nil {
		os.Stderr.Write(out.Bytes())
		if err == nil {
			err = fmt.Errorf("no benchmark result")
		}
		return m, err
	}
	return m, nil
}

// parse reads the first "Benchmark… N value unit value unit …" line.
func parse(out []byte) metrics {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		m := metrics{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		return m
	}
	return nil
}

// load is the machine's load averages (/proc/loadavg; uptime elsewhere).
func load() string {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			return strings.Join(f[:3], " ") + " (1, 5, 15 min)"
		}
	}
	out, err := exec.Command("uptime").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// printTable prints rows as a Markdown table.
func printTable(rows [][]string) {
	for i, r := range rows {
		fmt.Println("| " + strings.Join(r, " | ") + " |")
		if i == 0 {
			fmt.Println("|" + strings.Repeat("---|", len(r)))
		}
	}
}
