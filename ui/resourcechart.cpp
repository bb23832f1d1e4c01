#include "resourcechart.h"
