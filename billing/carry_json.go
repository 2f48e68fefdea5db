package billing

import "encoding/json"

// MarshalJSON writes the carry verdict with reason null when there is
// none (every slot fits), not "": JSON says "none" with null.
func (c Carry) MarshalJSON() ([]byte, error) {
	type plain Carry
	var reason *string
	if c.Reason != "" {
		reason = &c.Reason
	}
	return json.Marshal(struct {
		plain
		Reason *string `json:"reason"`
	}{plain(c), reason})
}
