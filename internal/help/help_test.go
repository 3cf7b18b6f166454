package help

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTopicFiles checks every topic file: a name pickup help can take, a
// title on its first line, links to topics that exist, and a row in
// README.md's table of topics that links to it.
func TestTopicFiles(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	topics := Topics()
	if len(topics) < 10 {
		t.Fatalf("only %d topics: %v", len(topics), topics)
	}
	names := map[string]bool{}
	for _, tp := range topics {
		names[tp.Name] = true
	}
	validName := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	link := regexp.MustCompile(`\]\(([a-z0-9-]+)\.md(#[a-z0-9-]*)?\)`)
	for _, tp := range topics {
		t.Run(tp.Name, func(t *testing.T) {
			text, ok := Text(tp.Name)
			if !ok {
				t.Fatalf("Text(%q) found nothing", tp.Name)
			}
			if !validName.MatchString(tp.Name) {
				t.Errorf("topic name %q: use lowercase letters, digits and -", tp.Name)
			}
			if !strings.HasPrefix(text, "# ") || tp.Title == "" {
				t.Errorf("topics/%s.md must start with a line \"# Title: what it covers\"", tp.Name)
			}
			for _, l := range strings.Split(text, "\n")[1:] {
				if strings.HasPrefix(l, "# ") && !insideCode(text, l) {
					t.Errorf("topics/%s.md has a second title %q: use ## for sections", tp.Name, l)
				}
			}
			for _, m := range link.FindAllStringSubmatch(text, -1) {
				if !names[m[1]] {
					t.Errorf("topics/%s.md links to %s.md, which is no topic", tp.Name, m[1])
				}
			}
			if want := "](internal/help/topics/" + tp.Name + ".md)"; !strings.Contains(string(readme), want) {
				t.Errorf("README.md's table of topics does not link to topic %s (%s)", tp.Name, want)
			}
		})
	}
	for _, m := range regexp.MustCompile(`\]\(internal/help/topics/([a-z0-9-]+)\.md\)`).FindAllStringSubmatch(string(readme), -1) {
		if !names[m[1]] {
			t.Errorf("README.md links to topic %s, which does not exist", m[1])
		}
	}
}

// insideCode says whether line l of text is inside a ``` block (a "# "
// there is a shell comment or a markdown body, not a title).
func insideCode(text, l string) bool {
	in := false
	for _, x := range strings.Split(text, "\n") {
		if strings.HasPrefix(x, "```") {
			in = !in
			continue
		}
		if x == l {
			return in
		}
	}
	return false
}

func TestText(t *testing.T) {
	for _, name := range []string{"", "nosuch", "../help", "topics/locks", ".hidden", "locks.md"} {
		if _, ok := Text(name); ok {
			t.Errorf("Text(%q) found a topic", name)
		}
	}
	if text, ok := Text("locks"); !ok || !strings.HasPrefix(text, "# Named locks") {
		t.Errorf("Text(locks) = %.40q, %v", text, ok)
	}
}

func TestList(t *testing.T) {
	list := List()
	if !regexp.MustCompile(`(?m)^   locks +Named locks: a mutex per key`).MatchString(list) {
		t.Errorf("List() does not give locks its title, without the #:\n%s", list)
	}
	for _, tp := range Topics() {
		if !regexp.MustCompile(`(?m)^   ` + regexp.QuoteMeta(tp.Name) + ` +` + regexp.QuoteMeta(tp.Title) + `$`).MatchString(list) {
			t.Errorf("List() has no line for %s:\n%s", tp.Name, list)
		}
	}
}

func TestExitCodeList(t *testing.T) {
	codes := ExitCodes()
	if len(codes) == 0 {
		t.Fatal("no exit codes read from topics/exit-codes.md")
	}
	list := ExitCodeList()
	for _, c := range codes {
		if c.Meaning == "" {
			t.Errorf("exit code %d has no meaning", c.Code)
		}
		line := regexp.MustCompile(`(?m)^   ` + regexp.QuoteMeta(strconv.Itoa(c.Code)) + ` +` + regexp.QuoteMeta(plain(c.Meaning)) + `$`)
		if !line.MatchString(list) {
			t.Errorf("ExitCodeList() has no line for %d %q:\n%s", c.Code, c.Meaning, list)
		}
	}
}
