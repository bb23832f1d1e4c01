#include "podspec.h"
