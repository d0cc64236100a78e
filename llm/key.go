package llm

import (
	"fmt"
	"os"
	"strings"
)

// KeyEnv are the environment variables an API key is read from, in
// order, when no key file is given.
var KeyEnv = []string{"QUIRE_LLM_KEY", "OPENAI_API_KEY"}

// LoadKey returns the API key: the contents of file (trimmed) when file
// is set, else the first of KeyEnv that getenv has; "" when there is
// none (Ollama, llama.cpp and vLLM need none by default). Errors name the
// file, never its contents.
func LoadKey(file string, getenv func(string) string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read the LLM key file: %w", err)
		}
		k := strings.TrimSpace(string(b))
		if k == "" {
			return "", fmt.Errorf("the LLM key file %s is empty: put the API key in it, or leave --llm-key-file out for an endpoint that needs none", file)
		}
		if strings.ContainsAny(k, "\r\n\t ") {
			return "", fmt.Errorf("the LLM key file %s holds more than one word: it must hold the API key alone", file)
		}
		return k, nil
	}
	for _, name := range KeyEnv {
		if k := strings.TrimSpace(getenv(name)); k != "" {
			return k, nil
		}
	}
	return "", nil
}
