package api

import (
	"errors"
	"fmt"
	"net/http"
)

// Code names an API error: the "code" of an error body, and through
// StatusOf the HTTP status it is answered with. Code that returns an
// error chooses the code; only this file turns codes into statuses.
type Code string

// The codes of the local API's errors (and of MCP tool errors, which
// carry the same bodies).
const (
	// CodeBadRequest: the request's body or parameters are malformed.
	CodeBadRequest Code = "bad_request"
	// CodeBadPath: a file path that is not a clean relative path inside
	// the agent's workspace, or that cannot be written there.
	CodeBadPath Code = "bad_path"
	// CodeBadUser: a user ID that cannot name a directory.
	CodeBadUser Code = "bad_user"
	// CodeBadBody: a webhook's body could not be read.
	CodeBadBody Code = "bad_body"
	// CodeBadPayload: a webhook's body is not a push event.
	CodeBadPayload Code = "bad_payload"
	// CodeUnauthorized: a bearer token is missing or unknown.
	CodeUnauthorized Code = "unauthorized"
	// CodeBadSignature: a webhook's signature is missing or wrong.
	CodeBadSignature Code = "bad_signature"
	// CodeForbidden: the caller may not use the agent, user or path.
	CodeForbidden Code = "forbidden"
	// CodeWebhooksOff: the webhook route without a configured secret.
	CodeWebhooksOff Code = "webhooks_off"
	// CodeNotFound: no such route, file or resource.
	CodeNotFound Code = "not_found"
	// CodeUnknownAgent: no deployed agent of that name.
	CodeUnknownAgent Code = "unknown_agent"
	// CodeUnknownSkill: no skill of that name that the request may see.
	CodeUnknownSkill Code = "unknown_skill"
	// CodeMethodNotAllowed: a known path with another method.
	CodeMethodNotAllowed Code = "method_not_allowed"
	// CodeExists: If-Match: * on a file that exists.
	CodeExists Code = "exists"
	// CodeStale: If-Match names content the file no longer has.
	CodeStale Code = "stale"
	// CodePathConflict: a write through a file or over a directory.
	CodePathConflict Code = "path_conflict"
	// CodeTooLarge: a request body over its limit.
	CodeTooLarge Code = "too_large"
	// CodeWriteLimit: a write over the agent's write_limit_bytes.
	CodeWriteLimit Code = "write_limit"
	// CodeFileLimit: a write that would grow a file past the file limit.
	CodeFileLimit Code = "file_limit"
	// CodeVirtualFile: a read or write of a file the caller supplies.
	CodeVirtualFile Code = "virtual_file"
	// CodeNotWritable: a path outside the write allow list.
	CodeNotWritable Code = "not_writable"
	// CodeNotMemory: an MCP memory tool given a path that is not memory.
	CodeNotMemory Code = "not_memory"
	// CodeNotUTF8: content that is not valid UTF-8.
	CodeNotUTF8 Code = "not_utf8"
	// CodeBadText: appended text that forges an entry heading.
	CodeBadText Code = "bad_text"
	// CodeInvalid: a write that would make a workspace the git endpoint
	// refuses.
	CodeInvalid Code = "invalid"
	// CodeNoChange: a proposal that changes nothing.
	CodeNoChange Code = "no_change"
	// CodeUpstreamRefused: the upstream refused a write for good.
	CodeUpstreamRefused Code = "upstream_refused"
	// CodePreconditionFailed: a console edit whose If-Match names
	// content the file no longer has; the body carries the current
	// content (StaleEditBody).
	CodePreconditionFailed Code = "precondition_failed"
	// CodeMergeConflict: a proposal whose files main changed since it
	// was made.
	CodeMergeConflict Code = "merge_conflict"
	// CodeCSRF: a console request without its CSRF token.
	CodeCSRF Code = "csrf"
	// CodePreconditionRequired: a write without If-Match.
	CodePreconditionRequired Code = "precondition_required"
	// CodeStoreUnavailable: the memory store does not answer.
	CodeStoreUnavailable Code = "store_unavailable"
	// CodeUpstreamUnavailable: the upstream did not take a write in time.
	CodeUpstreamUnavailable Code = "upstream_unavailable"
	// CodeInsufficientStorage: the file system a write goes to is full
	// (or the quota used up): the message names the path.
	CodeInsufficientStorage Code = "insufficient_storage"
	// CodeOutcomeUnknown: a write that may or may not have been applied
	// (its push was cut off, timed out or its answer lost): retry with
	// the same Idempotency-Key.
	CodeOutcomeUnknown Code = "outcome_unknown"
	// CodeWriteTimeout: a write that waited past its deadline for the
	// writer and was not applied.
	CodeWriteTimeout Code = "write_timeout"
	// CodeUnreadable: a file of the served workspace that is not read (a
	// symbolic link, a FIFO or a device in a --dir working tree): the
	// message names it.
	CodeUnreadable Code = "unreadable"
	// CodeNoModel: summoning or consolidation on a daemon that asks no
	// model (no --llm-url).
	CodeNoModel Code = "no_model"
	// CodeModelFailed: the model's endpoint did not answer, refused, or
	// answered something that is not a chat completion.
	CodeModelFailed Code = "model_failed"
	// CodeUnsupportedMediaType: a file write whose body is neither
	// application/json nor text/markdown.
	CodeUnsupportedMediaType Code = "unsupported_media_type"
	// CodeInternal: any error without a code of its own.
	CodeInternal Code = "internal"
)

// statuses is the one table of the HTTP status of each code.
var statuses = map[Code]int{
	CodeBadRequest:           http.StatusBadRequest,
	CodeBadPath:              http.StatusBadRequest,
	CodeBadUser:              http.StatusBadRequest,
	CodeBadBody:              http.StatusBadRequest,
	CodeBadPayload:           http.StatusBadRequest,
	CodeUnauthorized:         http.StatusUnauthorized,
	CodeBadSignature:         http.StatusUnauthorized,
	CodeForbidden:            http.StatusForbidden,
	CodeWebhooksOff:          http.StatusForbidden,
	CodeNotFound:             http.StatusNotFound,
	CodeUnknownAgent:         http.StatusNotFound,
	CodeUnknownSkill:         http.StatusNotFound,
	CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	CodeExists:               http.StatusConflict,
	CodeStale:                http.StatusConflict,
	CodePathConflict:         http.StatusConflict,
	CodeTooLarge:             http.StatusRequestEntityTooLarge,
	CodeWriteLimit:           http.StatusRequestEntityTooLarge,
	CodeFileLimit:            http.StatusRequestEntityTooLarge,
	CodeVirtualFile:          http.StatusUnprocessableEntity,
	CodeNotWritable:          http.StatusUnprocessableEntity,
	CodeNotMemory:            http.StatusUnprocessableEntity,
	CodeNotUTF8:              http.StatusUnprocessableEntity,
	CodeBadText:              http.StatusUnprocessableEntity,
	CodeInvalid:              http.StatusUnprocessableEntity,
	CodeNoChange:             http.StatusUnprocessableEntity,
	CodeUpstreamRefused:      http.StatusUnprocessableEntity,
	CodePreconditionRequired: http.StatusPreconditionRequired,
	CodePreconditionFailed:   http.StatusPreconditionFailed,
	CodeMergeConflict:        http.StatusConflict,
	CodeCSRF:                 http.StatusForbidden,
	CodeStoreUnavailable:     http.StatusServiceUnavailable,
	CodeUpstreamUnavailable:  http.StatusServiceUnavailable,
	CodeInsufficientStorage:  http.StatusInsufficientStorage,
	CodeWriteTimeout:         http.StatusServiceUnavailable,
	CodeOutcomeUnknown:       http.StatusGatewayTimeout,
	CodeUnreadable:           http.StatusInternalServerError,
	CodeNoModel:              http.StatusNotImplemented,
	CodeModelFailed:          http.StatusBadGateway,
	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeInternal:             http.StatusInternalServerError,
}

// Error is an API error: the body's code and message.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Status is the HTTP status a client received the error with
	// (daemon/client sets it, so that an answer passes through a proxy
	// such as `quire mcp` unchanged). The daemon never sets it: StatusOf
	// derives the status from Code.
	Status int `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorBody is the JSON body of every error answer.
type ErrorBody struct {
	Error Error `json:"error"`
}

// AsError returns the *Error in err's chain, or err as an internal
// error.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// StatusOf returns the HTTP status err is answered with: that of the
// code of the *Error in its chain (or the status a client received it
// with), 500 for any other error and for a code without a status; 200
// for nil.
func StatusOf(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var e *Error
	if !errors.As(err, &e) {
		return http.StatusInternalServerError
	}
	if e.Status != 0 {
		return e.Status
	}
	if s, ok := statuses[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
