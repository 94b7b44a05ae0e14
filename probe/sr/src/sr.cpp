#include "orbitlaw/sr.hpp"
