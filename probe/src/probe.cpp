#include "orbitlaw/probe.hpp"
