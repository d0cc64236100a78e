package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/quirehq/quire/llm"
)

// llmOptions are the flags of the model summoning and consolidation ask
// (serve, summon --dir, consolidate --dir).
type llmOptions struct {
	url, model, keyFile string
	timeout             time.Duration
	stream              bool
}

func (o *llmOptions) define(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "llm-url", "", "`URL` of an OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, llama.cpp, vLLM) for summoning and consolidation")
	fs.StringVar(&o.model, "llm-model", "", "chat `model` to ask (with --llm-url)")
	fs.StringVar(&o.keyFile, "llm-key-file", "", "`file` holding the endpoint's API key (default: $QUIRE_LLM_KEY, then $OPENAI_API_KEY; none for a local server)")
	fs.DurationVar(&o.timeout, "llm-timeout", 5*time.Minute, "give up an answer of the model after `duration` (each of up to 4 tries)")
	fs.BoolVar(&o.stream, "llm-stream", false, "read the model's answer as a stream of server-sent events")
}

// open returns the client the flags choose: nil without --llm-url (and
// --llm-model), an error for half a configuration. The key is read from
// its file or the environment and never printed.
func (o *llmOptions) open(getenv func(string) string, log *slog.Logger) (*llm.Client, error) {
	if o.url == "" && o.model == "" {
		if o.keyFile != "" {
			return nil, usagef("--llm-key-file needs --llm-url and --llm-model")
		}
		return nil, nil
	}
	if o.url == "" || o.model == "" {
		return nil, usagef("give --llm-url and --llm-model together")
	}
	if strings.Contains(o.url, "@") {
		return nil, usagef("--llm-url holds user information: the command line is visible to every local user; put the key in --llm-key-file or $QUIRE_LLM_KEY")
	}
	key, err := llm.LoadKey(o.keyFile, getenv)
	if err != nil {
		return nil, fmt.Errorf("--llm-key-file: %w", err)
	}
	return llm.New(llm.Options{URL: o.url, Model: o.model, APIKey: key, Timeout: o.timeout, Stream: o.stream,
		Logger: log.With("component", "llm")})
}
