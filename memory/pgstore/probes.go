package pgstore

import (
	"sync"
	"time"
)

// probesCache holds the ivfflat.probes value setProbesSQL last read from
// the catalog, so that a search sets it without the catalog query (at a
// million chunks that query took 0.4 ms where setting a known value
// takes 0.04). The value is read again once it is probesTTL old, by the
// search that finds it so (in the same round trip, as before), and by
// the next search after this store checked its vector index; an index
// another daemon sharing the database rebuilt is probed with the old
// value for at most probesTTL, which finds candidates all the same, with
// about the old index's recall.
type probesCache struct {
	mu    sync.Mutex
	value string
	read  time.Time
}

// probesTTL is how long a probes value read from the catalog is used.
const probesTTL = 10 * time.Second

// setKnownProbesSQL sets ivfflat.probes to a value read before ($1).
const setKnownProbesSQL = "SELECT set_config('ivfflat.probes', $1, false)"

// statement returns the statement that sets the probes, and whether it
// reads them from the catalog (its result is then to be stored).
func (c *probesCache) statement() (sql string, args []any, fromCatalog bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.value == "" || time.Since(c.read) >= probesTTL {
		return setProbesSQL, nil, true
	}
	return setKnownProbesSQL, []any{c.value}, false
}

// store keeps a value read from the catalog.
func (c *probesCache) store(value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.value, c.read = value, time.Now()
}

// forget has the next search read the probes from the catalog.
func (c *probesCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.value = ""
}
