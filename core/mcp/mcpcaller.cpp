#include "mcpcaller.h"

#include "protocolera.h"

bool McpCaller::declaresTasks() const
{
    return capabilities.value(u"extensions").toObject().contains(ProtocolEra::kTasksExtension);
}

bool McpCaller::declaresUi() const
{
    return ProtocolEra::declaresUi(capabilities);
}
