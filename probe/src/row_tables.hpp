#pragma once
// Selection and concatenation of row-aligned tables (ForceRows, ForceVectorRows), written once. A table
// provides `static void columns(A& a, B& b, F f)`, calling f(a.member, b.member) for every member that holds
// one entry per row: std::vector columns or Eigen vectors and matrices (rows = table rows).
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw::probe::detail {

template <class T>
struct IsStdVector : std::false_type {};
template <class T, class A>
struct IsStdVector<std::vector<T, A>> : std::true_type {};

// The rows at `indices`, in that order.
template <class Rows>
Rows select_rows(const Rows& rows, const std::vector<std::int64_t>& indices) {
  for (auto j : indices) {
    if (j < 0 || j >= rows.size()) throw Error("force rows: index " + std::to_string(j) + " out of range");
  }
  Rows out;
  Rows::columns(out, rows, [&](auto& to, const auto& from) {
    if constexpr (IsStdVector<std::decay_t<decltype(to)>>::value) {
      for (auto j : indices) to.push_back(from[static_cast<std::size_t>(j)]);
    } else {
      to.resize(static_cast<Eigen::Index>(indices.size()), from.cols());
      for (std::size_t i = 0; i < indices.size(); ++i)
        to.row(static_cast<Eigen::Index>(i)) = from.row(indices[i]);
    }
  });
  return out;
}

// The parts one after the other (all of the same dim, empty parts skipped).
template <class Rows>
Rows concat_rows(const std::vector<Rows>& parts) {
  Eigen::Index n = 0;
  int d = 0;
  for (const auto& part : parts) {
    if (part.size() == 0) continue;
    if (d != 0 && part.dim() != d) throw Error("force rows: cannot join rows of different dimensions");
    d = part.dim();
    n += part.size();
  }
  Rows out;
  Eigen::Index at = 0;
  for (const auto& part : parts) {
    const auto k = static_cast<Eigen::Index>(part.size());
    if (k == 0) continue;
    Rows::columns(out, part, [&](auto& to, const auto& from) {
      if constexpr (IsStdVector<std::decay_t<decltype(to)>>::value) {
        to.insert(to.end(), from.begin(), from.end());
      } else {
        if (at == 0) to.resize(n, from.cols());
        to.middleRows(at, k) = from;
      }
    });
    at += k;
  }
  return out;
}

}  // namespace orbitlaw::probe::detail
