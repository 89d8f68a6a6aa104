// Package junitxml holds the JUnit XML document that both report writers
// (the rule report of `invokeconf run` and the switch report of
// `invokeconf clients`) fill in, and the one way it is written.
package junitxml

import (
	"encoding/xml"
	"io"
)

// Suites is the root element, <testsuites>.
type Suites struct {
	XMLName   xml.Name `xml:"testsuites"`
	Name      string   `xml:"name,attr"`
	Tests     int      `xml:"tests,attr"`
	Failures  int      `xml:"failures,attr"`
	Errors    int      `xml:"errors,attr"`
	Skipped   int      `xml:"skipped,attr"`
	Time      string   `xml:"time,attr"`
	Timestamp string   `xml:"timestamp,attr,omitempty"`
	Suites    []Suite  `xml:"testsuite"`
}

// Suite is one <testsuite>.
type Suite struct {
	Name       string     `xml:"name,attr"`
	Tests      int        `xml:"tests,attr"`
	Failures   int        `xml:"failures,attr"`
	Errors     int        `xml:"errors,attr"`
	Skipped    int        `xml:"skipped,attr"`
	Time       string     `xml:"time,attr"`
	Timestamp  string     `xml:"timestamp,attr,omitempty"`
	Properties []Property `xml:"properties>property,omitempty"`
	Cases      []Case     `xml:"testcase"`
}

// Property is one <property> of a suite's <properties>.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one <testcase>; at most one of Failure, Error and Skipped is set.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *Problem `xml:"failure,omitempty"`
	Error     *Problem `xml:"error,omitempty"`
	Skipped   *Problem `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Problem is the body of a <failure>, <error> or <skipped>.
type Problem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Write writes root as an indented XML document ending in a newline.
func Write(w io.Writer, root Suites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
