package apierr

import (
	"fmt"
)

// Error is a request the server refuses. Param names the offending field in
// its OpenAI spelling ("" when the body as a whole is to blame); Status is
// the HTTP status (0 means 400 Bad Request); Err, when set, is a sentinel a
// caller may branch on with errors.Is.
type Error struct {
	Status int
	Param  string
	Msg    string
	Err    error
}

// New returns a 400 for param with a formatted message.
func New(param, format string, a ...any) *Error {
	return &Error{Param: param, Msg: fmt.Sprintf(format, a...)}
}

func (e *Error) Error() string {
	if e.Param == "" {
		return e.Msg
	}
	return "invalid " + e.Param + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus is Status, or 400 when it is unset.
func (e *Error) HTTPStatus() int {
	if e.Status == 0 {
		return 400 // Bad Request
	}
	return e.Status
}

// InPrompt names prompt i of a request holding n prompts in err when err is
// an *Error and n > 1 ("invalid prompt: prompt[2]: must not be empty"); the
// param and status are kept. Other errors, and every error of a
// single-prompt request, are returned as they are.
func InPrompt(err error, i, n int) error {
	e, ok := err.(*Error)
	if n <= 1 || !ok {
		return err
	}
	c := *e
	c.Msg = fmt.Sprintf("prompt[%d]: %s", i, e.Msg)
	return &c
}
