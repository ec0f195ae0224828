package openai

import (
	"net/http"
)

// ErrorResponse is the error envelope: {"error": {...}}.
type ErrorResponse struct {
	Error ErrorInfo `json:"error"`
}

// ErrorInfo is the body of an error envelope. Param is null unless one
// request field is to blame. Code is the HTTP status (vLLM's spelling).
type ErrorInfo struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

// NewError builds an envelope for an HTTP status; param "" means null.
func NewError(status int, param, msg string) ErrorResponse {
	e := ErrorResponse{Error: ErrorInfo{Message: msg, Type: ErrorType(status), Code: status}}
	if param != "" {
		e.Error.Param = &param
	}
	return e
}

// ErrorType is the envelope "type" for an HTTP status, in vLLM's spelling.
func ErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "BadRequestError"
	case http.StatusUnauthorized:
		return "AuthenticationError"
	case http.StatusNotFound:
		return "NotFoundError"
	case http.StatusMethodNotAllowed:
		return "MethodNotAllowedError"
	case http.StatusRequestEntityTooLarge:
		return "RequestEntityTooLargeError"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailableError"
	case http.StatusNotImplemented:
		return "NotImplementedError"
	}
	if status >= 500 {
		return "InternalServerError"
	}
	return "BadRequestError"
}
