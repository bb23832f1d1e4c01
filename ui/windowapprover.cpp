#include "windowapprover.h"
