package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quirehq/quire/internal/xdg"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/openai"
)

// embedderOptions are the flags that choose a memory embedder, shared by
// serve, index and search.
type embedderOptions struct {
	embedder, embedURL, embedModel, embedKeyFile, embedFile string
	embedDims, embedRPM, embedTPM                           int
}

func (o *embedderOptions) define(fs *flag.FlagSet) {
	fs.StringVar(&o.embedder, "embedder", "none", "memory `embedder`: none (full-text only), builtin (offline, lexical: parts of words), glove (offline, a word vectors file) or openai (an OpenAI-compatible endpoint)")
	fs.StringVar(&o.embedURL, "embed-url", "", "`URL` of the OpenAI-compatible embeddings endpoint (--embedder openai)")
	fs.StringVar(&o.embedModel, "embed-model", "", "embedding `model` (--embedder openai)")
	fs.IntVar(&o.embedDims, "embed-dimensions", 0, "vector `length` of the model (--embedder openai; 0: ask the endpoint)")
	fs.StringVar(&o.embedKeyFile, "embed-key-file", "", "`file` holding the endpoint's API key (default: $QUIRE_EMBED_KEY, then $OPENAI_API_KEY)")
	fs.StringVar(&o.embedFile, "embed-file", "", "GloVe or word2vec text `file` of word vectors (--embedder glove)")
	fs.IntVar(&o.embedRPM, "embed-rpm", 0, "most embedding `requests` a minute (--embedder openai; 0: no limit but the endpoint's 429s)")
	fs.IntVar(&o.embedTPM, "embed-tpm", 0, "most embedding `tokens` a minute, estimated (--embedder openai; 0: no limit)")
}

// open returns the embedder the flags choose.
func (o *embedderOptions) open(ctx context.Context, getenv func(string) string) (memory.Embedder, error) {
	switch o.embedder {
	case "none", "":
		return memory.None{}, nil
	case "builtin":
		return memory.Builtin{}, nil
	case "glove":
		if o.embedFile == "" {
			return nil, usagef("--embedder glove needs --embed-file: a GloVe or word2vec text file, such as glove.6B.100d.txt")
		}
		cache := cacheFile(getenv)
		if cache != "" {
			cache = filepath.Dir(cache) // the compact form lives beside the embedding cache
		}
		return memory.OpenWordVectorsCached(o.embedFile, cache)
	case "openai":
		if o.embedURL == "" || o.embedModel == "" {
			return nil, usagef("--embedder openai needs --embed-url and --embed-model")
		}
		key := getenv("QUIRE_EMBED_KEY")
		if key == "" {
			key = getenv("OPENAI_API_KEY")
		}
		if o.embedKeyFile != "" {
			b, err := os.ReadFile(o.embedKeyFile)
			if err != nil {
				return nil, fmt.Errorf("--embed-key-file: %w", err)
			}
			key = strings.TrimSpace(string(b))
		}
		e, err := openai.New(openai.Options{URL: o.embedURL, Model: o.embedModel, Dimensions: o.embedDims, APIKey: key, Timeout: 30 * time.Second,
			RequestsPerMinute: o.embedRPM, TokensPerMinute: o.embedTPM})
		if err != nil {
			return nil, err
		}
		if e.Dimensions() == 0 {
			if err := e.Probe(ctx); err != nil {
				return nil, fmt.Errorf("embedder: %w (give --embed-dimensions to start without asking the endpoint)", err)
			}
		}
		return e, nil
	default:
		return nil, usagef("unknown --embedder %q: use builtin, glove, openai or none", o.embedder)
	}
}

// cacheFile is where the embedded store keeps its embedding cache:
// $XDG_CACHE_HOME/quire/embeddings (or ~/.cache/quire/embeddings); "" when
// neither is known.
func cacheFile(getenv func(string) string) string {
	dir := xdg.CacheDir(getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "embeddings")
}
