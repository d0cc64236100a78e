//go:build unix

package gitsync

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkPushLive pushes a follower's one-file write to live on a quire
// host on loopback (in this process), alternately with git push and with
// the native send-pack, in one run: the pair's wall time and CPU are
// reported per push. CPU is the whole process tree's (this process, the
// host included, and its waited-for children: git push,
// git-remote-http, pack-objects, and the host's git index-pack, which
// both paths pay).
func BenchmarkPushLive(b *testing.B) {
	ctx := context.Background()
	lr := newLiveRemote(b, nil)
	base := lr.live(b)
	log := "# 2026-01-02\n\n## 09:00\n\nfirst\n"
	type path struct {
		name      string
		gitOnly   bool
		wall, cpu time.Duration
		childCPU  time.Duration
		pushes    int
	}
	paths := []*path{{name: "git", gitOnly: true}, {name: "native"}}
	i := 0
	for b.Loop() {
		if i > 0 && i%20 == 0 {
			// Maintenance, as a host and a follower run it: every push
			// adds a pack to both, and git and go-git slow down with
			// hundreds of them.
			b.StopTimer()
			for _, r := range []*Repository{lr.up, lr.mirror} {
				if err := r.Repack(); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
		for k := range paths {
			p := paths[(k+i)%2] // alternate which goes first
			b.StopTimer()
			log += fmt.Sprintf("\n## 10:%02d\n\nentry %d via %s\n", i%60, i, p.name)
			pushed := lr.write(b, base, map[string]string{"memory/2026-01-02.md": log})
			lr.mirror.sp.gitOnly.Store(p.gitOnly)
			self0, child0 := cpuTimes()
			start := time.Now()
			b.StartTimer()
			now, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, base, pushed)
			b.StopTimer()
			p.wall += time.Since(start)
			self1, child1 := cpuTimes()
			p.cpu += self1 - self0 + child1 - child0
			p.childCPU += child1 - child0
			p.pushes++
			if err != nil || now != pushed {
				b.Fatalf("push %d via %s: %s, %v", i, p.name, now, err)
			}
			base = pushed
			b.StartTimer()
		}
		i++
	}
	if n := lr.mirror.sp.native.Load(); n != int64(paths[1].pushes) {
		b.Fatalf("%d native pushes, want %d", n, paths[1].pushes)
	}
	for _, p := range paths {
		n := float64(p.pushes)
		b.ReportMetric(float64(p.wall.Nanoseconds())/n, p.name+"-ns/push")
		b.ReportMetric(float64(p.cpu.Nanoseconds())/n, p.name+"-cpu-ns/push")
		b.ReportMetric(float64(p.childCPU.Nanoseconds())/n, p.name+"-child-cpu-ns/push")
	}
}
