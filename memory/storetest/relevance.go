package storetest

import (
	"strings"
	"testing"

	"github.com/quirehq/quire/memory"
)

// relevanceDocs is a small but realistic memory: a curated MEMORY.md and
// a few daily logs, some for one user.
var relevanceDocs = []memory.Document{
	doc("", "MEMORY.md", `# Long-term memory

## People
- Dana is the product owner; she prefers short written summaries over meetings.
- Rui maintains the billing service and is on call every second week.
- The design team sits in Lisbon; their standup is at 09:30 Lisbon time.

## Infrastructure
- Production runs on three Hetzner machines behind HAProxy.
- Database backups run nightly at 02:00 UTC and are kept for 35 days.
- The staging environment resets every Sunday night.

## Preferences
- Always write dates as YYYY-MM-DD in reports.
- Use pandoc to convert documents; for PDFs use pdftotext first.
- Never deploy on Fridays after 15:00.
`),
	doc("", "memory/2026-03-02.md", `## 10:14
Rui reported that invoice emails were sent twice to 14 customers. Root cause: retry loop in the mailer without idempotency key.

## 16:40
Fixed the duplicate invoice emails by adding an idempotency key per invoice.
`),
	doc("", "memory/2026-03-03.md", `## 09:05
Dana asked for a summary of March incidents by Friday.

## 11:30
Upgraded PostgreSQL from 15 to 16 on staging; the pgvector extension needed a rebuild.
`),
	doc("", "memory/2026-03-04.md", `## 14:00
Quarterly planning: the mobile app rewrite moves to Q3; the public API v2 ships in Q2.

## 17:20
The office wifi password changed; it is in the shared vault under "Office".
`),
	doc("alice", "MEMORY.md", `# Alice
- Alice is vegetarian and allergic to peanuts.
- Alice's daughter has swimming lessons on Tuesdays at 17:00.
`),
	doc("alice", "memory/2026-03-04.md", `## 08:15
Alice booked flights to Porto for the conference on April 12.
`),
}

// relevanceQueries pair a question with a phrase of the chunk that must
// be among the top 3.
var relevanceQueries = []struct {
	user, query, want string
}{
	{"", "when do database backups run", "backups run nightly"},
	{"", "who maintains billing", "Rui maintains the billing"},
	{"", "duplicate invoice emails fix", "idempotency key per invoice"},
	{"", "convert a pdf to markdown", "pandoc"},
	{"", "postgres upgrade pgvector", "Upgraded PostgreSQL"},
	{"", "when does the api v2 ship", "public API v2"},
	{"", "deploy friday rule", "Never deploy on Fridays"},
	{"", "wifi password", "wifi password changed"},
	{"alice", "what food allergies does alice have", "allergic to peanuts"},
	{"alice", "flights to porto", "booked flights to Porto"},
	{"alice", "staging environment reset", "staging environment resets"},
}

func testRecall(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	index(t, s, "a", "c1", relevanceDocs...)
	found := 0
	for _, q := range relevanceQueries {
		hits := search(t, s, "a", memory.Query{Text: q.query, User: q.user, Limit: 3})
		ok := false
		for _, h := range hits {
			if strings.Contains(h.Text, q.want) {
				ok = true
			}
		}
		if ok {
			found++
		} else {
			t.Logf("miss: %q (user %q) → %s", q.query, q.user, describe(hits))
		}
	}
	recall := float64(found) / float64(len(relevanceQueries))
	t.Logf("recall@3 = %.2f (%d/%d)", recall, found, len(relevanceQueries))
	if recall < 0.9 {
		t.Errorf("recall@3 = %.2f, want ≥ 0.90", recall)
	}
}
