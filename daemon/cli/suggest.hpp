#pragma once

#include <string>
#include <vector>

namespace flytecd::cli {

// The candidate closest to `word` by edit distance, if it is close enough to be a typo (at most
// a third of the word's length, and at least 1); "" otherwise. Pure.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

// "; did you mean 'apply'?" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace flytecd::cli
