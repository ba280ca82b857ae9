package main

import "strings"

// A fresh draw (heldout-fresh.tsv): frames written after the detectors
// were tuned against heldout.tsv, with another seed, to measure how far
// that tuning generalises. Same sources, same values, new sentences.

var freshIDFrames = []string{
	"Quick q: I'm filling in the {company} portal and it wants my {cueword}. Is {v} the right format or do I drop the spaces?",
	"Forwarding the customer's details for the refund:\n• name: {name}\n• {cueword}: {v}\n• reason: duplicate charge",
	"[{date} 09:14] {first}: my {cueword} is {v}\n[{date} 09:15] agent: thanks, checking now",
	"Can you OCR-correct this scan? '{cueword} : {v}  Name : {name}  Address : {street}'",
	"{name} ({city}) — {cueword} {v} — appointment confirmed for {date}",
	"please don't store this anywhere: {cue}{v}",
	"Translate to English for the case file: {local}",
	"tool result: {\"status\":\"found\",\"holder\":\"{name}\",\"{cuekey}\":\"{v}\"}",
}

var freshHealthFrames = []string{
	"{age} y/o {sexword}, {first} {last}, seen in ED for {cond}. Discharged on {med}.",
	"Spoke to {first} {last}'s {child} re: {cond}; DNR status to be confirmed.",
	"Weekend plan for {title} {last}: {cond} improving, step down {med} to PO on Monday.",
	"Summarise: '{first} {last} attended with worsening {cond}. Bloods taken. Plan to start {med}.'",
	"{first} {last} - {cond} - on {med} - for OT assessment before discharge",
	"can u draft a sick note for {first} {last}? off work 2 weeks with {cond}",
	"Family meeting booked: {first} {last} ({age}{sex}), new diagnosis of {cond}.",
}

var freshMRNFrames = []string{
	"Pt label: {last}, {first} | {mrncue}{mrn} | {dob}",
	"{mrncue}{mrn} — {cond} — for discharge today",
	"Results pending for {mrncue}{mrn}: troponin x2, lactate.",
	"Can someone unlock the chart for {mrncue}{mrn}? I'm locked out after the downtime.",
}

var freshICDFrames = []string{
	"Coding query for {first} {last}: is {code} right for {desc}?",
	"{first} {last} dx {code}, review in clinic",
	"Sick note for {name}: condition {code} ({desc}), unfit for work until {date}.",
}

var freshBirthFrames = []string{
	"Hi, registering {first} {last}, born {dob}, at the practice. What documents do I bring?",
	"Member since 2019: {first} {last}, DOB {dob}, {city}",
	"{last}, {first} ({dob})",
	"Booking reference for {title} {first} {last} (date of birth {dob}) is confirmed.",
}

func (g *gen) freshItems() []item {
	g.items, g.seen = nil, map[string]bool{}
	r := g.r
	for i := range idKinds {
		k := &idKinds[i]
		start := len(g.items)
		for tries := 0; len(g.items)-start < 40 && tries < 2000; tries++ {
			p := g.person()
			vars := g.vars(p)
			vars["cue"], vars["cueword"], vars["cuekey"] = g.cue(k)
			vars["v"] = k.gen(r, p)
			if k.name == "us-bank-routing" {
				vars["cueword"], vars["cue"] = "bank details", "bank details: "
			}
			vars["local"] = fill(pick(r, k.local), vars)
			frame := pick(r, freshIDFrames)
			if k.needCue && strings.Contains(frame, "{local}") && !hasCue(vars["local"], k) {
				continue
			}
			g.add(k.name, fill(frame, vars))
		}
	}
	clinical := []struct {
		kind   string
		frames []string
		n      int
	}{
		{"health-term-with-identifier", freshHealthFrames, 80},
		{"medical-record-number", freshMRNFrames, 40},
		{"icd10-diagnosis", freshICDFrames, 40},
		{"person-name-with-birth-date", freshBirthFrames, 40},
	}
	for _, c := range clinical {
		start := len(g.items)
		for tries := 0; len(g.items)-start < c.n && tries < 50*c.n; tries++ {
			g.add(c.kind, fill(pick(r, c.frames), g.vars(g.person())))
		}
	}
	for _, b := range []struct {
		kind string
		f    func() string
	}{
		{"benign-code", func() string { return benignCode(r, []string{"000000000", "123456780"}) }},
		{"benign-invoice", func() string { return benignInvoice(r, g.companies) }},
		{"benign-log", func() string { return benignLog(r) }},
		{"benign-research", func() string { return benignResearch(r) }},
		{"benign-guideline", func() string { return benignGuideline(r) }},
		{"benign-chat", func() string { return benignChat(r) }},
	} {
		start := len(g.items)
		for tries := 0; len(g.items)-start < 60 && tries < 5000; tries++ {
			g.add(b.kind, b.f())
		}
	}
	return g.items
}
