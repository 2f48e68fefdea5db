package vantagefetch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/internal/pingfile"
	"github.com/linecheck/linecheck/internal/route"
)

// The answer is written only when the readers that will read the file
// accept it: a ping measurement as recorded.probes reads it (internal/
// pingfile), any other as trace --replay and recorded.forward read it
// (route.ReadTraces). A cut answer fails here as not complete JSON.

func checkAtlas(data []byte, name string) error {
	var list []struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("the answer is not a RIPE Atlas result list: %w", jsonmsg.Describe(data, err))
	}
	if len(list) == 0 {
		return errors.New("no results (the measurement has none yet, or none in public)")
	}
	return checkReadable(data, name, list[0].Type == "ping")
}

func checkGlobalping(data []byte, name string) error {
	var m struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("the answer is not a Globalping measurement: %w", jsonmsg.Describe(data, err))
	}
	if m.Status == "in-progress" {
		return errors.New("still in progress: fetch it again when it has finished")
	}
	return checkReadable(data, name, m.Type == "ping")
}

func checkReadable(data []byte, name string, ping bool) error {
	var err error
	if ping {
		_, err = pingfile.Read(bytes.NewReader(data), name)
	} else {
		_, err = route.ReadTraces(bytes.NewReader(data), name)
	}
	if err != nil {
		return fmt.Errorf("linecheck cannot read the answer: %w", err)
	}
	return nil
}
