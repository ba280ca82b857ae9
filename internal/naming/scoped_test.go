package naming

import (
	"strings"
	"testing"
)

func TestScoped(t *testing.T) {
	if got := Scoped("chat"); got != "chat" {
		t.Errorf("Scoped(chat) = %q", got)
	}
	if got := Scoped("chat", "local-qwen"); got != "chat-local-qwen" {
		t.Errorf("Scoped(chat, local-qwen) = %q", got)
	}
	long := Scoped(strings.Repeat("r", 60), "backend")
	if len(long) > 63 {
		t.Errorf("Scoped is %d characters long", len(long))
	}
	if long == Scoped(strings.Repeat("r", 60), "backend2") {
		t.Error("distinct long names must stay distinct")
	}
	if got := SubdomainPart("Team.B", 40); got != "team-b" {
		t.Errorf("SubdomainPart(Team.B) = %q", got)
	}
	if got := SubdomainPart("", 40); got != "x" {
		t.Errorf("SubdomainPart(\"\") = %q", got)
	}
}
