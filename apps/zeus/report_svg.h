// Copyright 2026 The Zeus C++ Authors.
//
// Inline SVG charts for the `zeus reproduce` report: lines, markers and
// horizontal reference lines over linear or log2 axes. Deterministic text (the
// same data gives the same bytes). Not a general plotting library.

#ifndef ZEUS_APPS_ZEUS_REPORT_SVG_H_
#define ZEUS_APPS_ZEUS_REPORT_SVG_H_

#include <string>
#include <utility>
#include <vector>

namespace zeus::cli::report {

struct Series {
  std::string label;
  std::string color;  // CSS color
  std::vector<std::pair<double, double>> points;
  bool line = true;      // connect the points
  bool markers = false;  // draw a dot at each point
  double marker_radius = 2.5;
};

// A horizontal line at y (e.g. the Default or Oracle cost).
struct ReferenceLine {
  std::string label;
  std::string color;
  double y = 0;
};

// A labelled point drawn on top (e.g. the chosen configuration).
struct Mark {
  std::string label;
  std::string color;
  double x = 0;
  double y = 0;
  std::string shape = "circle";  // "circle", "square", "ring" or "star"
};

struct Chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log2_y = false;  // for batch sizes
  std::vector<Series> series;
  std::vector<ReferenceLine> references;
  std::vector<Mark> marks;
  int width_px = 460;
  int height_px = 330;  // room for two legend lines
};

// An <svg> element (no XML prologue) to embed in HTML.
std::string RenderChart(const Chart& chart);

// Escapes &, <, >, " for HTML/SVG text and attributes.
std::string Escape(const std::string& text);

}  // namespace zeus::cli::report

#endif  // ZEUS_APPS_ZEUS_REPORT_SVG_H_
