package main

import (
	"fmt"
	"math/rand/v2"
)

// Clinical text as a hospital team writes it: handoffs, admission notes,
// discharge summaries and the record header of the i2b2/n2c2
// de-identification challenges ("Record date: ...", "NAME: Last, First
// MRN: ..."), with synthetic names, dates and numbers; and patients'
// and relatives' own messages.

var conditions = []string{
	"pneumonia", "community-acquired pneumonia", "sepsis", "urosepsis", "atrial fibrillation", "new-onset AF with RVR",
	"CHF exacerbation", "COPD exacerbation", "type 2 diabetes", "DKA", "NSTEMI", "cellulitis of the left leg", "UTI",
	"DVT", "pulmonary embolism", "acute kidney injury", "an ischemic stroke", "a TIA", "HIV", "hepatitis C", "major depressive disorder",
	"breast cancer", "metastatic colon cancer", "asthma", "schizophrenia", "opioid use disorder", "alcohol withdrawal",
	"dementia", "Parkinson's disease", "multiple sclerosis", "epilepsy", "anorexia nervosa", "bipolar disorder",
	"a hip fracture", "appendicitis", "pancreatitis", "GI bleed", "cirrhosis", "chronic kidney disease stage 4",
	"rheumatoid arthritis", "lupus", "COVID-19", "influenza A", "preeclampsia", "gestational diabetes", "anemia",
	"hypertension", "hypothyroidism", "leukemia", "lymphoma", "melanoma", "tuberculosis", "syphilis", "chlamydia",
	"Crohn's disease", "Graves' disease", "Hodgkin lymphoma", "an ulcerative colitis flare", "endometriosis", "a miscarriage at 9 weeks",
}

var meds = []string{
	"warfarin", "apixaban 5 mg BID", "metformin 1000 mg", "insulin glargine 20 units qHS", "lisinopril", "furosemide 40 mg IV",
	"vancomycin", "piperacillin-tazobactam", "sertraline 100 mg", "methadone 80 mg", "Biktarvy", "atorvastatin 80",
	"levothyroxine", "prednisone taper", "lithium", "clozapine", "enoxaparin", "ceftriaxone 1 g daily", "oxycodone PRN",
	"tamoxifen", "pembrolizumab", "buprenorphine", "heparin drip", "amiodarone", "digoxin", "quetiapine",
}

var symptoms = []string{"SOB", "chest pain", "fever and chills", "productive cough", "confusion", "syncope", "RLQ pain", "hematemesis", "falls at home", "palpitations", "dysuria", "leg swelling"}

var hospitals = []string{"St. Mary's", "Riverside General", "Mercy Medical Center", "Royal Infirmary", "Northside Community Hospital", "Brigham", "County General"}

var specialties = []string{"CARDIOLOGY", "NEPHROLOGY", "ONCOLOGY", "INTERNAL MEDICINE", "PSYCHIATRY", "OB/GYN", "INFECTIOUS DISEASE", "ENDOCRINOLOGY"}

// healthFrames: a person's name (or other identifier) beside a health
// term; no MRN, so the health detector must fire on its own.
var healthFrames = []string{
	"Pt {first} {last}, {age}{sex}, admitted with {cond}. Started {med}.",
	"{title} {first} {last}, DOB {dob}, on {med}.",
	"{first} {last} has {cond}.",
	"{last}, {first} — {age} y/o {sexword} w/ hx of {cond}, presenting with {sx}.",
	"Bed {bed} – {first} {last}, {age}{sex}, POD2, afebrile, on {med}. Plan: d/c tomorrow if stable.",
	"Discharge summary\nPatient: {first} {last}\nAdmission date: {date}\nPrincipal diagnosis: {cond}\nDischarge meds: {med}\nFollow-up with PCP in 1 week.",
	"Handoff: {first} {last} in {bed} is being treated for {cond}; watch K+ and repeat labs at 0600.",
	"My {parent} {first} {last} was just diagnosed with {cond}. What questions should we ask {pos} doctor?",
	"Hi Dr. {doctor}, I'm writing about my {spouse} {first} {last}; since starting {med} for {pos} {cond} {subj} has been very tired.",
	"Can you help me write a letter to my employer? I'm {first} {last} and I need time off for treatment of {cond}.",
	"Summarize for the team: {first} {last} ({age}{sex}) came in with {sx}, workup consistent with {cond}, on {med}.",
	"{title} {last} ({first}), born {dob}, seen in clinic today for {cond} follow-up.",
	"Consult note: asked to see {first} {last} for {cond}. Recommend {med}.",
	"SOAP\nS: {first} {last} reports {sx} x3 days.\nO: T 38.4, HR 112.\nA: {cond}.\nP: {med}, recheck in 48h.",
	"Patient name: {first} {last}\nDOB: {dob}\nAllergies: NKDA\nProblem list: {cond}; hypertension\nCurrent meds: {med}",
	"FYI {first} {last} tested positive for {cond} – please don't share outside the care team.",
	"Nursing note 0300: {first} {last} restless, c/o {sx}. Hx {cond}. Gave {med} per order. Will monitor.",
	"Reminder: {first} {last}'s prenatal visit at 28 weeks is on {date}; glucose tolerance test due.",
	"ED triage: {first} {last}, {age}, arrived by EMS with {sx}; known {cond}; on {med}.",
	"DISCHARGE SUMMARY\n\nPatient: {last}, {first}\nAdmitted: {date}   Discharged: {date2}\nAttending: Dr. {doctor}\n\nHOSPITAL COURSE: {age} y/o {sexword} admitted with {sx}, found to have {cond}. Treated with {med} with improvement.\n\nDISCHARGE MEDICATIONS:\n1. {med}\n2. {med2}\n\nFOLLOW-UP: PCP in 1-2 weeks.",
	"DOB {dob}, {cond}, on {med} – can you check the interactions for this patient?",
	"Pls review: {age}{sex} DOB {dob} w/ {cond}, started {med} today, Cr 1.8.",
	"{first} {last} ({age}) — {cond} — {med} — next review {date}",
	"Can you make this note more concise? '{title} {last} is a {age}-year-old {sexword} with a history of {cond} who presents with {sx}. {Subj} was started on {med}.'",
	"Hi team, {first} {last} from bed {bed} is asking about {pos} {cond} results, can someone call the family?",
	"Morning huddle:\n- {bed}: {first} {last}, {cond}, on {med}\n- {bed2}: {first2} {last2}, {cond2}, NPO for OR",
	"Write a patient-friendly explanation of {cond} for {first} {last}, who was started on {med} yesterday.",
	"{title} {last}, {age}, admitted with {cond} – family aware, DNACPR discussed.",
	"{title} {last} in bay {bed}: {cond}, {med} held this morning, review after ward round.",
	"{initial}. {last} ({age}{sex}) – {cond}, for review by the reg.",
	"my {parent} {lfirst} {llast} has {cond} and takes {med}, is it ok for {obj} to drink alcohol?",
	"Re: {first} {last} – {cond} – results attached\n\nHi, please see the attached bloods for {first}. Can we discuss at MDT?",
	"{first} {last} is HIV positive and asked us not to tell {pos} employer. How do I word the fit note?",
	"What are the treatment options for {first} {last}'s {cond}? {Subj} is {age} and already on {med}.",
	"Clinic list Tue: 09:00 {first} {last} ({cond}); 09:20 {first2} {last2} ({cond2}); 09:40 cancelled.",
}

// mrnFrames: a medical record number after the cues clinicians write,
// punctuated every way they punctuate it.
var mrnCues = []string{"MRN", "MRN:", "MRN#", "MRN #", "MRN-", "MR#", "MR-", "Med rec no.", "Med. rec. #", "medical record number", "Medical Record No:", "mrn", "UR No.", "URN", "Hosp #",
	"Patient ID:", "Pt ID", "patient id #", "Hospital No.", "hosp no", "Chart #", "chart no.", "Unit No.", "record #"}

var mrnFrames = []string{
	"Record date: {date}\n\nNAME: {last}, {first}    {mrncue}{mrn}\n\n{spec} CLINIC NOTE\n\nHPI: {age} yo {sexword} with {cond}. Seen today for follow-up.",
	"{mrncue}{mrn} – please pull the last echo report.",
	"Labs for {mrncue}{mrn} are back, K 5.9, repeat stat.",
	"Transfer request: {mrncue}{mrn}, {hospital} to ICU.",
	"Can you merge duplicate charts? {mrncue}{mrn} and {mrncue}{mrn2} are the same person.",
	"Scanned document attached to {mrncue}{mrn} (consent form).",
	"Admit order — {mrncue}{mrn}; dx {cond}; attending Dr. {doctor}.",
	"{first} {last} / {mrncue}{mrn} / {spec}",
	"Echo booked for {first} {last} ({mrncue}{mrn}) on {date}.",
	"pls add {mrncue}{mrn} to tomorrow's list",
	"Radiology: CT abdomen for {mrncue}{mrn} booked {date} 14:30.",
}

var icdCodes = []struct{ code, desc string }{
	{"E11.9", "type 2 diabetes mellitus without complications"}, {"I48.91", "unspecified atrial fibrillation"},
	{"J18.9", "pneumonia, unspecified organism"}, {"A41.9", "sepsis, unspecified organism"}, {"N17.9", "acute kidney failure"},
	{"J44.1", "COPD with acute exacerbation"}, {"I50.9", "heart failure, unspecified"}, {"F32.1", "major depressive disorder, single episode, moderate"},
	{"F41.1", "generalized anxiety disorder"}, {"C50.911", "malignant neoplasm of right female breast"}, {"Z34.90", "supervision of normal pregnancy"},
	{"B20", "HIV disease"}, {"K35.80", "acute appendicitis"}, {"N39.0", "urinary tract infection"}, {"I21.4", "NSTEMI"},
	{"I63.9", "cerebral infarction"}, {"G30.9", "Alzheimer's disease"}, {"F20.9", "schizophrenia"}, {"F11.20", "opioid dependence"},
	{"M54.50", "low back pain"}, {"S72.001A", "fracture of right femoral neck, initial encounter"}, {"T40.1X1A", "heroin poisoning, initial encounter"},
	{"O24.410", "gestational diabetes, diet controlled"}, {"E10.10", "type 1 diabetes with ketoacidosis"}, {"K70.30", "alcoholic cirrhosis"},
	{"F10.239", "alcohol dependence with withdrawal"}, {"C34.90", "lung cancer"}, {"D50.9", "iron deficiency anemia"}, {"I26.99", "pulmonary embolism"},
}

var icdFrames = []string{
	"Pt {first} {last} — Dx: {code} ({desc}).",
	"Assessment/Plan for {first} {last}:\n1. {desc} ({code}) – continue {med}.\n2. HTN (I10) – stable.",
	"My doctor put {code} on my sick note. What does that diagnosis code mean?",
	"Claim for member {name}: diagnosis code {code}, DOS {date}.",
	"The patient's primary diagnosis is {code}; secondary I10.",
	"Please code this encounter: {first} {last}, seen for {desc}. I think the ICD-10 is {code}?",
	"Problem list (pt {last}): {code} {desc}; E78.5 hyperlipidemia",
	"Superbill: {name} | DOB {dob} | ICD-10: {code} | CPT 99214",
	"Dx {code} for {title} {last}, f/u in 2 weeks.",
	"I was diagnosed with {code} last year, can I still get life insurance?",
}

// birthFrames: a person's name and date of birth, nothing about health.
var birthFrames = []string{
	"Name: {first} {last}\nDate of birth: {dob}",
	"{first} {last} (born {dob}) joins the team on Monday.",
	"DOB: {dob} — {last}, {first}",
	"Please book a flight for {first} {last}, date of birth {dob}, passport to follow.",
	"Caller {first} {last}. {tmpl}",
	"Hi, I'm {first} {last}, my birthday is {dob}. Why does the form say I'm under 18?",
	"Applicant: {title} {first} {last}; D.O.B. {dob}; nationality: {country}",
	"{first} {last}, b. {dob}, {city}",
	"Beneficiary details – name {first} {last}, born on {dob} in {city}.",
	"guest_name={first} {last}&dob={dob}&room=412",
	"Passenger: {last}/{first} {title}  DOB {dob}",
	"dob: {dob}\nname: {lfirst} {llast}",
	"Patient/in: {first} {last}, geb. {dobde}, wohnhaft in {city}",
	"{frtitle} {ulast} {first}, {ne} le {dobfr} à {city}",
	"Titular: {first} {last}, {nacido} el {dobfr}",
	"Intestatario: {first} {last}, {nato} il {dobfr} a {city}",
	"{first} {last}, född {dobiso}, ska kallas till intervju.",
	"Attendee list: {first} {last} ({dob}), {first2} {last2} ({dob2})",
	"Could you fix the typo in {first} {last}'s record? {Pos} date of birth is {dob}, not the 1st.",
	"My {child} {first} {last} was born on {dob}; which vaccines is {subj} due for at school entry?",
	"Employee: {last}, {first}\nBirth date: {dob}\nStart date: {date}\nDepartment: {job}",
	"Please send the birthday card to {first} {last} (DOB {dob}) before the end of the month.",
	"Renewing the passport for {title} {first} {last}, born {dob}, place of birth {city}.",
}

// birthTemplates are presidio-research's templates that carry a date of
// birth (the caller's name is said before them).
func dob(r *rand.Rand) string { return dobIn(r, 1930+r.IntN(75)) }

// dobIn draws a date of birth in year y, printed one of the ways forms and
// notes print one.
func dobIn(r *rand.Rand, y int) string {
	m, d := 1+r.IntN(12), 1+r.IntN(28)
	months := []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	switch r.IntN(8) {
	case 0:
		return fmt.Sprintf("%02d/%02d/%d", m, d, y)
	case 1:
		return fmt.Sprintf("%02d/%02d/%d", d, m, y)
	case 2:
		return fmt.Sprintf("%d-%02d-%02d", y, m, d)
	case 3:
		return fmt.Sprintf("%02d.%02d.%d", d, m, y)
	case 4:
		return fmt.Sprintf("%s %d, %d", months[m-1], d, y)
	case 5:
		return fmt.Sprintf("%d %s %d", d, months[m-1][:3], y)
	case 6:
		return fmt.Sprintf("%d/%d/%02d", m, d, y%100)
	default:
		return fmt.Sprintf("%d %s %d", d, months[m-1], y)
	}
}

func mrn(r *rand.Rand) string {
	switch r.IntN(9) {
	case 6:
		return "E" + digits(r, 8)
	case 7:
		return digits(r, 3) + "-" + digits(r, 3) + "-" + digits(r, 3)
	case 8:
		return digits(r, 2) + "-" + digits(r, 5)
	case 0:
		return digits(r, 7)
	case 1:
		return digits(r, 5)
	case 2:
		return "00" + digits(r, 6)
	case 3:
		return "PT-" + digits(r, 6)
	case 4:
		return digits(r, 8)
	default:
		return "A" + digits(r, 7)
	}
}
