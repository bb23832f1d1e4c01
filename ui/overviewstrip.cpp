#include "overviewstrip.h"
