// Copyright 2026 The Zeus C++ Authors.
//
// Test-only readers of RenderChart's SVG (svg_chart.h): elements by tag,
// numeric attributes, the frame, marker bounding boxes, tick texts and legend
// entries. Shared by the chart's tests and the reproduce report's.

#ifndef ZEUS_SRC_CHART_SVG_CHART_TEST_UTIL_H_
#define ZEUS_SRC_CHART_SVG_CHART_TEST_UTIL_H_

#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace zeus::chart::svg_test {

struct Box {
  double x0, y0, x1, y1;
};

// The number in `name="..."` of one element; a test failure if it has none.
inline double Attr(const std::string& element, const std::string& name) {
  std::smatch m;
  const std::regex re("\\s" + name + "=\"(-?[0-9.]+)\"");
  if (!std::regex_search(element, m, re)) {
    ADD_FAILURE() << "no " << name << " in " << element;
    return 0;
  }
  return std::stod(m[1]);
}

// The opening tags `<tag ...>` in document order.
inline std::vector<std::string> Elements(const std::string& svg, const std::string& tag) {
  std::vector<std::string> out;
  const std::regex re("<" + tag + "\\s[^>]*>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(it->str());
  }
  return out;
}

// The SVG without its legend (everything from the legend's group on).
inline std::string PlotPart(const std::string& svg) {
  const std::size_t legend = svg.find("<g class=\"legend\"");
  return legend == std::string::npos ? svg : svg.substr(0, legend);
}

// The (x, y) pairs of a `points="x,y x,y ..."` attribute.
inline std::vector<std::pair<double, double>> Points(const std::string& element) {
  std::smatch m;
  std::vector<std::pair<double, double>> out;
  if (!std::regex_search(element, m, std::regex("points=\"([^\"]*)\""))) return out;
  const std::string points = m[1];
  const std::regex pair_re("(-?[0-9.]+),(-?[0-9.]+)");
  for (auto it = std::sregex_iterator(points.begin(), points.end(), pair_re); it != std::sregex_iterator(); ++it) {
    out.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  }
  return out;
}

// The plot frame: the rect of class "frame".
inline Box Frame(const std::string& svg) {
  for (const std::string& rect : Elements(svg, "rect")) {
    if (rect.find("class=\"frame\"") == std::string::npos) continue;
    const double x = Attr(rect, "x"), y = Attr(rect, "y");
    return {x, y, x + Attr(rect, "width"), y + Attr(rect, "height")};
  }
  ADD_FAILURE() << "no frame";
  return {};
}

// Bounding boxes of every marker drawn in the plot (circles, squares,
// polygons of class "marker"), stroke included.
inline std::vector<Box> MarkerBoxes(const std::string& svg) {
  const std::string plot = PlotPart(svg);
  auto is_marker = [](const std::string& e) { return e.find("class=\"marker ") != std::string::npos; };
  std::vector<Box> boxes;
  for (const std::string& c : Elements(plot, "circle")) {
    if (!is_marker(c)) continue;
    const double stroke = c.find("stroke-width=\"2\"") != std::string::npos ? 1 : 0;
    const double r = Attr(c, "r") + stroke, cx = Attr(c, "cx"), cy = Attr(c, "cy");
    boxes.push_back({cx - r, cy - r, cx + r, cy + r});
  }
  for (const std::string& rect : Elements(plot, "rect")) {
    if (!is_marker(rect)) continue;
    const double x = Attr(rect, "x"), y = Attr(rect, "y");
    boxes.push_back({x, y, x + Attr(rect, "width"), y + Attr(rect, "height")});
  }
  for (const std::string& p : Elements(plot, "polygon")) {
    if (!is_marker(p)) continue;
    Box b{1e9, 1e9, -1e9, -1e9};
    for (const auto& [x, y] : Points(p)) {
      b = {std::min(b.x0, x), std::min(b.y0, y), std::max(b.x1, x), std::max(b.y1, y)};
    }
    boxes.push_back(b);
  }
  return boxes;
}

// The texts of class `cls` ("x-tick", "y-tick", ...) in document order.
inline std::vector<std::string> Texts(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::regex re("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

// The legend entry whose text is `label` (as written, i.e. escaped), swatch
// included; "" if there is none.
inline std::string LegendItem(const std::string& svg, const std::string& label) {
  const std::regex re("<g class=\"legend-item\">\\n((?:(?!</g>)[\\s\\S])*>" + label + "</text>\\n)</g>");
  std::smatch m;
  if (!std::regex_search(svg, m, re)) return {};
  return m[1];
}

}  // namespace zeus::chart::svg_test

#endif  // ZEUS_SRC_CHART_SVG_CHART_TEST_UTIL_H_
