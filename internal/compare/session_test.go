package compare

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
)

// A session on the samples evaluates and prices every candidate as Run
// does, holds each recorded probe stream, and a live session of a
// recorded_only file is refused before anything is read.
func TestSessionOnTheSamplesIsRunsEvaluation(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	f, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSession(f, SessionOptions{Now: now}); !errors.Is(err, candidates.ErrRecordedOnly) {
		t.Fatalf("live session of a recorded_only file: %v, want ErrRecordedOnly", err)
	}
	s, err := OpenSession(f, SessionOptions{Offline: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if s.Pricing == nil || len(s.Candidates) != len(f.Candidates) {
		t.Fatalf("offline session: pricing %v, %d candidates", s.Pricing != nil, len(s.Candidates))
	}
	g, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), g, Options{Offline: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range r.Candidates {
		var got *SessionCandidate
		for i := range s.Candidates {
			if s.Candidates[i].Candidate.Name == want.Name {
				got = &s.Candidates[i]
			}
		}
		if got == nil {
			t.Fatalf("%s: not in the session", want.Name)
		}
		ev := got.Evaluation
		if !reflect.DeepEqual(ev.SLA, want.SLA) || !reflect.DeepEqual(ev.Route.RTT, want.Route.RTT) || ev.Route.LineClass != want.Route.LineClass {
			t.Errorf("%s: session %+v / %+v, Run %+v / %+v", want.Name, ev.SLA, ev.Route.RTT, want.SLA, want.Route.RTT)
		}
		if ev.Monthly == nil || ev.Monthly.Total != want.Monthly.Total || ev.Monthly.Converted.String() != want.Monthly.Converted.String() {
			t.Errorf("%s: session monthly %+v, Run %+v", want.Name, ev.Monthly, want.Monthly)
		}
		if len(got.Stream) != 576 {
			t.Errorf("%s: %d recorded records, want 576 (288 per target)", want.Name, len(got.Stream))
		}
	}
}
