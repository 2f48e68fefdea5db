// Package archtest holds the module's import rules, as tests, in one place
// (imports_test.go): which room may import which. It has no code of its own;
// run it with go test ./internal/testkit/archtest/.
package archtest
