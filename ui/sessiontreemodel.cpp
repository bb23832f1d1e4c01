#include "sessiontreemodel.h"
