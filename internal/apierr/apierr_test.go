package apierr

import (
	"errors"
	"net/http"
	"testing"
)

func TestError(t *testing.T) {
	sentinel := errors.New("sentinel")
	tests := []struct {
		name   string
		err    *Error
		msg    string
		status int
	}{
		{"field", New("n", "must be at least %d, got %d", 1, 0), "invalid n: must be at least 1, got 0", http.StatusBadRequest},
		{"body", &Error{Msg: "malformed JSON"}, "malformed JSON", http.StatusBadRequest},
		{"status", &Error{Status: http.StatusNotFound, Param: "model", Msg: "no such model"}, "invalid model: no such model", http.StatusNotFound},
		{"wrapped", &Error{Param: "prompt", Msg: "too long", Err: sentinel}, "invalid prompt: too long", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.msg {
				t.Errorf("Error() = %q, want %q", got, tt.msg)
			}
			if got := tt.err.HTTPStatus(); got != tt.status {
				t.Errorf("HTTPStatus() = %d, want %d", got, tt.status)
			}
			if (tt.err.Err != nil) != errors.Is(tt.err, sentinel) {
				t.Errorf("errors.Is(sentinel) = %v", errors.Is(tt.err, sentinel))
			}
		})
	}
}

func TestInPrompt(t *testing.T) {
	e := &Error{Status: 413, Param: "prompt", Msg: "must not be empty"}
	other := errors.New("other")
	tests := []struct {
		name string
		err  error
		i, n int
		want string
	}{
		{"one prompt", e, 0, 1, "invalid prompt: must not be empty"},
		{"several", e, 2, 3, "invalid prompt: prompt[2]: must not be empty"},
		{"not an Error", other, 2, 3, "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := InPrompt(tt.err, tt.i, tt.n)
			if got.Error() != tt.want {
				t.Fatalf("%q, want %q", got.Error(), tt.want)
			}
			var ae *Error
			if errors.As(got, &ae) && (ae.Param != "prompt" || ae.Status != 413) {
				t.Fatalf("param/status not kept: %+v", ae)
			}
		})
	}
	if e.Msg != "must not be empty" {
		t.Fatal("InPrompt changed its argument")
	}
}
