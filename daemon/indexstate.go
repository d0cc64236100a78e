package daemon

import (
	"fmt"
	"sync"
	"time"

	"github.com/quirehq/quire/memory"
)

// indexState is what the memory store holds of a source's agents, as
// the index runs left it. The indexer owns it: only its runs write it
// (queued, ran); status, the deploy report, memory search and
// Daemon.WaitIndexed read it through agent and progress. The zero value
// is ready to use.
type indexState struct {
	mu      sync.Mutex
	indexed map[string]string // agent → indexed commit
	// atCommit counts the agents indexed at each commit of indexed, so
	// that progress answers "not yet" without a pass over every agent:
	// a deployment whose commit fewer agents hold than it has cannot be
	// done.
	atCommit map[string]int
	// failedAt counts the agents of failed by the commit their run was of,
	// so that a failure of another commit does not cost progress its
	// shortcut.
	failedAt map[string]int
	stats    map[string]memory.IndexStats // agent → stats of the last index run
	failed   map[string]indexFailure      // agent → the last run's error
	// notIndexed is, per agent, the memory files the last index run
	// left out (notIndexedError).
	notIndexed map[string]string
	// unindexedSince is, per agent, when the oldest deployment not yet
	// indexed was deployed: the lag that status reports, which a newer
	// deployment does not reset.
	unindexedSince map[string]time.Time
	changed        chan struct{} // closed and replaced after each index run
}

// indexFailure is an index run that failed: the commit it was of, and
// why.
type indexFailure struct{ commit, err string }

// indexRun is the outcome of one agent's index run of a deployment.
type indexRun struct {
	agent  string
	commit string // the deployment's
	// indexed is the commit the store holds now: the deployment's, or a
	// newer one another daemon indexed.
	indexed    string
	stats      memory.IndexStats
	notIndexed string // notIndexedError of the run's problems
	err        error
}

// agentIndex is what the store holds of one agent.
type agentIndex struct {
	commit     string // the indexed commit ("" for none yet)
	stats      memory.IndexStats
	err        string // why the last run failed ("" when it worked)
	notIndexed string
	// since is when the oldest deployment not yet indexed was deployed
	// (waiting: there is one).
	since   time.Time
	waiting bool
}

func (ix *indexState) init() {
	if ix.changed == nil {
		ix.indexed = map[string]string{}
		ix.atCommit = map[string]int{}
		ix.failedAt = map[string]int{}
		ix.stats = map[string]memory.IndexStats{}
		ix.failed = map[string]indexFailure{}
		ix.notIndexed = map[string]string{}
		ix.unindexedSince = map[string]time.Time{}
		ix.changed = make(chan struct{})
	}
}

// queued records that dep waits for its index run: an agent not indexed
// at dep's commit lags from when dep was deployed, unless an older
// deployment waits already.
func (ix *indexState) queued(dep *deployment) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.init()
	for _, name := range dep.names {
		if _, waiting := ix.unindexedSince[name]; !waiting && ix.indexed[name] != dep.commit {
			ix.unindexedSince[name] = dep.at
		}
	}
}

// ran records an index run and wakes those waiting for one; current is
// the source's deployment as of now (the agent lags no more when the
// run was of it).
func (ix *indexState) ran(r indexRun, current func() *deployment) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.init()
	name := r.agent
	if r.notIndexed != "" {
		ix.notIndexed[name] = r.notIndexed
	} else {
		delete(ix.notIndexed, name)
	}
	ix.setFailed(name, r)
	if r.err == nil {
		ix.setIndexed(name, r.indexed)
		ix.stats[name] = r.stats
		if cur := current(); cur == nil || cur.commit == r.commit {
			delete(ix.unindexedSince, name)
		}
	}
	close(ix.changed)
	ix.changed = make(chan struct{})
}

// setIndexed records that the store holds agent name at commit, keeping
// atCommit's counts.
func (ix *indexState) setIndexed(name, commit string) {
	old, had := ix.indexed[name]
	if had && old == commit {
		return
	}
	if had {
		if ix.atCommit[old]--; ix.atCommit[old] <= 0 {
			delete(ix.atCommit, old)
		}
	}
	ix.indexed[name] = commit
	ix.atCommit[commit]++
}

// setFailed records r's failure of agent name, or that it did not fail,
// keeping failedAt's counts.
func (ix *indexState) setFailed(name string, r indexRun) {
	if old, had := ix.failed[name]; had {
		if ix.failedAt[old.commit]--; ix.failedAt[old.commit] <= 0 {
			delete(ix.failedAt, old.commit)
		}
		delete(ix.failed, name)
	}
	if r.err != nil {
		ix.failed[name] = indexFailure{commit: r.commit, err: r.err.Error()}
		ix.failedAt[r.commit]++
	}
}

// agent is what the store holds of agent name.
func (ix *indexState) agent(name string) agentIndex {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.init()
	a := agentIndex{commit: ix.indexed[name], stats: ix.stats[name], err: ix.failed[name].err, notIndexed: ix.notIndexed[name]}
	a.since, a.waiting = ix.unindexedSince[name]
	return a
}

// progress says whether every agent of dep is indexed at dep's commit,
// else the error of a run of that commit that failed (nil when none did),
// and a channel closed after the next index run.
func (ix *indexState) progress(dep *deployment) (done bool, failed error, changed <-chan struct{}) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.init()
	if ix.failedAt[dep.commit] == 0 && ix.atCommit[dep.commit] < len(dep.names) {
		// Not every agent is indexed at dep's commit, and no run of it failed:
		// the answer needs no pass over dep's agents (a waiter asks after
		// every index run, so the pass made waiting on a fleet quadratic).
		return false, nil, ix.changed
	}
	done = true
	for _, name := range dep.names {
		if ix.indexed[name] == dep.commit {
			continue
		}
		done = false
		if f, ok := ix.failed[name]; ok && f.commit == dep.commit && failed == nil {
			failed = fmt.Errorf("index agent %s at %s: %s", name, short(dep.commit), f.err)
		}
	}
	return done, failed, ix.changed
}
