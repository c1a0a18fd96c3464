#ifndef MIXT_VERSION_HPP
#define MIXT_VERSION_HPP

// The one place the version lives; CMake reads it from here.
#define MIXT_VERSION_MAJOR 0
#define MIXT_VERSION_MINOR 1
#define MIXT_VERSION_PATCH 0

#endif // MIXT_VERSION_HPP
