package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestStatusOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
		code Code
	}{
		{"bad_request", Errorf(CodeBadRequest, "x"), 400, CodeBadRequest},
		{"bad_path", Errorf(CodeBadPath, "x"), 400, CodeBadPath},
		{"bad_user", Errorf(CodeBadUser, "x"), 400, CodeBadUser},
		{"bad_body", Errorf(CodeBadBody, "x"), 400, CodeBadBody},
		{"bad_payload", Errorf(CodeBadPayload, "x"), 400, CodeBadPayload},
		{"unauthorized", Errorf(CodeUnauthorized, "x"), 401, CodeUnauthorized},
		{"bad_signature", Errorf(CodeBadSignature, "x"), 401, CodeBadSignature},
		{"forbidden", Errorf(CodeForbidden, "x"), 403, CodeForbidden},
		{"webhooks_off", Errorf(CodeWebhooksOff, "x"), 403, CodeWebhooksOff},
		{"not_found", Errorf(CodeNotFound, "x"), 404, CodeNotFound},
		{"unknown_agent", Errorf(CodeUnknownAgent, "x"), 404, CodeUnknownAgent},
		{"unknown_skill", Errorf(CodeUnknownSkill, "x"), 404, CodeUnknownSkill},
		{"method_not_allowed", Errorf(CodeMethodNotAllowed, "x"), 405, CodeMethodNotAllowed},
		{"exists", Errorf(CodeExists, "x"), 409, CodeExists},
		{"stale", Errorf(CodeStale, "x"), 409, CodeStale},
		{"path_conflict", Errorf(CodePathConflict, "x"), 409, CodePathConflict},
		{"too_large", Errorf(CodeTooLarge, "x"), 413, CodeTooLarge},
		{"write_limit", Errorf(CodeWriteLimit, "x"), 413, CodeWriteLimit},
		{"file_limit", Errorf(CodeFileLimit, "x"), 413, CodeFileLimit},
		{"virtual_file", Errorf(CodeVirtualFile, "x"), 422, CodeVirtualFile},
		{"not_writable", Errorf(CodeNotWritable, "x"), 422, CodeNotWritable},
		{"not_memory", Errorf(CodeNotMemory, "x"), 422, CodeNotMemory},
		{"not_utf8", Errorf(CodeNotUTF8, "x"), 422, CodeNotUTF8},
		{"bad_text", Errorf(CodeBadText, "x"), 422, CodeBadText},
		{"invalid", Errorf(CodeInvalid, "x"), 422, CodeInvalid},
		{"no_change", Errorf(CodeNoChange, "x"), 422, CodeNoChange},
		{"upstream_refused", Errorf(CodeUpstreamRefused, "x"), 422, CodeUpstreamRefused},
		{"precondition_required", Errorf(CodePreconditionRequired, "x"), 428, CodePreconditionRequired},
		{"store_unavailable", Errorf(CodeStoreUnavailable, "x"), 503, CodeStoreUnavailable},
		{"upstream_unavailable", Errorf(CodeUpstreamUnavailable, "x"), 503, CodeUpstreamUnavailable},
		{"insufficient_storage", Errorf(CodeInsufficientStorage, "x"), 507, CodeInsufficientStorage},
		{"write_timeout", Errorf(CodeWriteTimeout, "x"), 503, CodeWriteTimeout},
		{"outcome_unknown", Errorf(CodeOutcomeUnknown, "x"), 504, CodeOutcomeUnknown},
		{"internal", Errorf(CodeInternal, "x"), 500, CodeInternal},

		{"wrapped", fmt.Errorf("commit: %w", Errorf(CodeStale, "x")), 409, CodeStale},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", Errorf(CodeUpstreamUnavailable, "x"))), 503, CodeUpstreamUnavailable},
		{"joined", errors.Join(errors.New("first"), Errorf(CodeNotFound, "x")), 404, CodeNotFound},
		{"plain error", errors.New("disk on fire"), 500, CodeInternal},
		{"lower-layer sentinel", fmt.Errorf("read: %w", fs.ErrNotExist), 500, CodeInternal},
		{"context", context.DeadlineExceeded, 500, CodeInternal},
		{"code without a status", Errorf(Code("made_up"), "x"), 500, Code("made_up")},
		{"as a client received it", &Error{Code: "http", Message: "bad gateway", Status: 502}, 502, Code("http")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StatusOf(tt.err); got != tt.want {
				t.Errorf("StatusOf(%v) = %d, want %d", tt.err, got, tt.want)
			}
			e := AsError(tt.err)
			if e.Code != tt.code {
				t.Errorf("AsError(%v).Code = %q, want %q", tt.err, e.Code, tt.code)
			}
			if tt.code == CodeInternal && e.Message != tt.err.Error() && e.Message != "x" {
				t.Errorf("AsError(%v).Message = %q, want the error's text", tt.err, e.Message)
			}
		})
	}
	if got := StatusOf(nil); got != http.StatusOK {
		t.Errorf("StatusOf(nil) = %d, want 200", got)
	}
}

// TestEveryCodeHasAStatus keeps the table complete: every Code constant
// declared in errors.go has a status of its own (a missing one would
// answer 500).
func TestEveryCodeHasAStatus(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, v := range vs.Values {
				code, err := strconv.Unquote(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				n++
				if _, ok := statuses[Code(code)]; !ok {
					t.Errorf("code %q has no status in the table", code)
				}
			}
		}
	}
	if n != len(statuses) {
		t.Errorf("%d codes declared, %d in the table", n, len(statuses))
	}
}

// TestErrorAnswers checks that the handler answers a backend's error with
// the mapped status and the error's own body, wrapped or not.
func TestErrorAnswers(t *testing.T) {
	tests := []struct {
		err  error
		want int
		code Code
	}{
		{Errorf(CodeUnknownAgent, "no deployed agent %q", "x"), 404, CodeUnknownAgent},
		{fmt.Errorf("search: %w", Errorf(CodeStoreUnavailable, "store away")), 503, CodeStoreUnavailable},
		{errors.New("boom"), 500, CodeInternal},
	}
	for _, tt := range tests {
		h := Handler(failing{err: tt.err}, Options{})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/agents/x/skills", nil))
		var eb ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
			t.Fatalf("%v: body %s: %v", tt.err, rec.Body, err)
		}
		if rec.Code != tt.want || eb.Error.Code != tt.code || eb.Error.Message != AsError(tt.err).Message {
			t.Errorf("%v: %d %s, want %d with code %s", tt.err, rec.Code, rec.Body, tt.want, tt.code)
		}
	}
}

// failing is a Backend whose Skills answers err.
type failing struct {
	Backend
	err error
}

func (f failing) Skills(context.Context, string, string) (SkillsResponse, error) {
	return SkillsResponse{}, f.err
}
