package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon/api"
)

// codeResourceNotFound is MCP's code for a resource that does not exist
// up to protocol 2025-11-25; from 2026-07-28 (SEP-2164) it is -32602.
const codeResourceNotFound = -32002

// versionInvalidParamsNotFound is the first protocol version that
// answers a missing resource with -32602.
const versionInvalidParamsNotFound = "2026-07-28"

// rpcErrorData is the data of a protocol error made from an API error:
// the API's code, so that a client can tell stale from not_found, and the
// URI of a missing resource.
type rpcErrorData struct {
	Code api.Code `json:"code,omitempty"`
	URI  string   `json:"uri,omitempty"`
}

// rpcErrors gives the errors of requests answered with a protocol error
// (prompts/get, resources/read …; tool errors are results) JSON-RPC
// codes: an API error of the caller's making is -32602 (invalid params),
// a missing resource MCP's resource-not-found code of the session's
// protocol version, anything else -32603 (internal error). The message
// is the API error's message, its code in data.
func rpcErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		return res, rpcError(method, req, err)
	}
}

func rpcError(method string, req sdk.Request, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // the SDK answers a cancelled request itself
	}
	var uri string
	if r, ok := req.(*sdk.ReadResourceRequest); ok && r.Params != nil {
		uri = r.Params.URI
	}
	var w *jsonrpc.Error
	if errors.As(err, &w) {
		if method == "resources/read" && w.Code == sdk.CodeResourceNotFound && w.Message == "Resource not found" {
			// The SDK's own answer for a URI no resource matches.
			return notFound(req, "resource "+uri+" does not exist", uri)
		}
		if w.Code == 0 {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: w.Message, Data: w.Data}
		}
		return err
	}
	var e *api.Error
	if !errors.As(err, &e) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	if method == "resources/read" && e.Code == api.CodeNotFound {
		return notFound(req, e.Message, uri)
	}
	code := int64(jsonrpc.CodeInternalError)
	if st := api.StatusOf(e); st >= 400 && st < 500 {
		code = jsonrpc.CodeInvalidParams
	}
	data, _ := json.Marshal(rpcErrorData{Code: e.Code, URI: uri})
	return &jsonrpc.Error{Code: code, Message: e.Message, Data: data}
}

// notFound is a missing resource's error, with the code of the
// request's protocol version: -32602 for a request of the sessionless
// protocol (2026-07-28, its version in _meta), -32002 in a session that
// began with initialize (which negotiates 2025-11-25 at the latest).
func notFound(req sdk.Request, msg, uri string) error {
	code := int64(codeResourceNotFound)
	if p, ok := req.GetParams().(*sdk.ReadResourceParams); ok && p != nil {
		if v, ok := p.Meta[sdk.MetaKeyProtocolVersion].(string); ok && v >= versionInvalidParamsNotFound {
			code = jsonrpc.CodeInvalidParams
		}
	}
	data, _ := json.Marshal(rpcErrorData{Code: api.CodeNotFound, URI: uri})
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}
