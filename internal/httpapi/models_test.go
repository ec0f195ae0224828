package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	sdk "github.com/openai/openai-go/v3"
)

// TestRetrieveModel: GET /v1/models/{id} answers every served name (aliases
// and names with slashes too) with OpenAI's model object, read back by the
// official Go SDK's Models.Get, and 404 with the envelope naming "model"
// for any other id.
func TestRetrieveModel(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, func(c *Config) { c.ServedModelNames = []string{model, "alias", "org/name"} })
	client := newSDKClient(srv.URL, "")
	for _, id := range []string{model, "alias", "org/name"} {
		m, err := client.Models.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if m.ID != id || m.Object != "model" || m.OwnedBy == "" || m.Created == 0 {
			t.Fatalf("%s: %s", id, m.RawJSON())
		}
	}
	for _, path := range []string{"/v1/models/nope", "/v1/models/", "/v1/models/org", "/v1/models/test-model/x"} {
		r := do(t, srv, "GET", path, "")
		var env struct {
			Error struct {
				Type  string  `json:"type"`
				Param *string `json:"param"`
				Code  int     `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.body, &env); err != nil || r.status != http.StatusNotFound ||
			env.Error.Param == nil || *env.Error.Param != "model" || env.Error.Code != 404 || env.Error.Type != "NotFoundError" {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	var apiErr *sdk.Error
	if _, err := client.Models.Get(context.Background(), "nope"); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Param != "model" {
		t.Fatalf("unknown id through the SDK: %v", err)
	}
	if r := do(t, srv, "POST", "/v1/models/alias", ""); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
}
