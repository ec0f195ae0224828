// Package apierr is the one error type of a refused request: what the
// client asked for that the server will not do, with the OpenAI request
// field to blame and the HTTP status it answers. Every layer that checks a
// request — the JSON decoding of internal/openai, sampling.Params.Validate,
// the front end's llm.Prepare — returns an *apierr.Error, and internal/httpapi
// turns it into the OpenAI error envelope in one place.
//
// Imports: fmt only (it is a leaf that the engine packages import, and
// they must not depend on net/http).
package apierr
