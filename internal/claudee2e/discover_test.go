package claudee2e

import (
	"syscall"
	"testing"
)

func TestDiscover(t *testing.T) {
	p := newProject(t, projectFiles)
	ids := p.seed("first", "second")
	api := newStubAPI(t, "a", step{Bash: "pickup next"}, step{Text: "done"})
	c := p.startClaude("a", api, claudeOpts{})
	c.prompt("/pickup")
	apiB := newStubAPI(t, "b", step{Bash: "pickup claim " + ids[0]}, step{Bash: "echo out; echo err >&2; exit 7"}, step{Text: "done"})
	b := p.startClaude("b", apiB, claudeOpts{})
	b.prompt("/pickup " + ids[0])
	t.Logf("results: %v", apiB.Results())
	t.Logf("errs: %v", apiB.Errors())
	b.end()
	c.signal(syscall.SIGTERM)
	c.wait("term")
	t.Log(c.err)
	t.Log(p.boardTree())
	t.Log(p.events())
	t.Fail()
}
